# shellcheck shell=bash
# Sourced by scripts/test.sh, fuzz.sh and tsan.sh (with $root set to the checkout): the compiler
# cache and sanitizer settings the builds share. Every value can be overridden from outside.
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/koord-ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
# Paths under the checkout are hashed relative to it, so a fresh clone elsewhere (CI) reuses the
# objects of an earlier build instead of recompiling everything.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
# Every leak and every UB report fails the test (or, under libFuzzer, saves the input) that
# caused it.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
