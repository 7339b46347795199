package main

// .Values as Helm builds them: the chart's values.yaml, then each -f file, then each --set,
// later ones winning key by key (maps merge, anything else replaces; a null deletes).

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	yaml "gopkg.in/yaml.v2"
)

// readYAMLMap reads a YAML mapping with string keys all the way down, as Helm hands them to
// templates (yaml.v2 alone gives map[interface{}]interface{}, which sprig's dict functions
// cannot index).
func readYAMLMap(path string) (map[string]interface{}, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v interface{}
	if err := yaml.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if v == nil {
		return map[string]interface{}{}, nil
	}
	m, ok := stringKeys(v).(map[string]interface{})
	if !ok {
		return nil, fmt.Errorf("%s: not a mapping", path)
	}
	return m, nil
}

func stringKeys(v interface{}) interface{} {
	switch t := v.(type) {
	case map[interface{}]interface{}:
		m := make(map[string]interface{}, len(t))
		for k, val := range t {
			m[fmt.Sprint(k)] = stringKeys(val)
		}
		return m
	case map[string]interface{}:
		for k, val := range t {
			t[k] = stringKeys(val)
		}
		return t
	case []interface{}:
		for i, val := range t {
			t[i] = stringKeys(val)
		}
		return t
	}
	return v
}

// mergeInto overlays src on dst as Helm coalesces user values onto the chart's.
func mergeInto(dst, src map[string]interface{}) {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		sm, sok := v.(map[string]interface{})
		dm, dok := dst[k].(map[string]interface{})
		if sok && dok {
			mergeInto(dm, sm)
			continue
		}
		dst[k] = v
	}
}

// parseSet reads one --set argument, "a.b=c,d={x,y},e[0].f=g", into a values tree. A backslash
// makes the next character plain (featureGates="A=true\,B=false"). With typed, true/false,
// null and integers become bool, nil and int64 as Helm types them; otherwise all are strings.
func parseSet(arg string, typed bool) (map[string]interface{}, error) {
	out := map[string]interface{}{}
	p := &setParser{s: []rune(arg), typed: typed}
	for !p.done() {
		path, err := p.key()
		if err != nil {
			return nil, fmt.Errorf("--set %q: %v", arg, err)
		}
		value, err := p.value()
		if err != nil {
			return nil, fmt.Errorf("--set %q: %v", arg, err)
		}
		if err := assign(out, path, value); err != nil {
			return nil, fmt.Errorf("--set %q: %v", arg, err)
		}
	}
	return out, nil
}

type setParser struct {
	s     []rune
	i     int
	typed bool
}

func (p *setParser) done() bool { return p.i >= len(p.s) }

// pathPart is one step of a key: a map key, or a list index when index >= 0.
type pathPart struct {
	key   string
	index int
}

func (p *setParser) key() ([]pathPart, error) {
	var parts []pathPart
	var cur strings.Builder
	flush := func() error {
		if cur.Len() == 0 {
			return fmt.Errorf("empty key at offset %d", p.i)
		}
		parts = append(parts, pathPart{key: cur.String(), index: -1})
		cur.Reset()
		return nil
	}
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch c {
		case '\\':
			if p.done() {
				return nil, fmt.Errorf("trailing backslash")
			}
			cur.WriteRune(p.s[p.i])
			p.i++
		case '.':
			if cur.Len() > 0 {
				if err := flush(); err != nil {
					return nil, err
				}
			} else if len(parts) == 0 || parts[len(parts)-1].index < 0 {
				return nil, fmt.Errorf("empty key at offset %d", p.i-1)
			}
		case '[':
			if cur.Len() > 0 {
				if err := flush(); err != nil {
					return nil, err
				}
			}
			end := p.i
			for end < len(p.s) && p.s[end] != ']' {
				end++
			}
			if end >= len(p.s) {
				return nil, fmt.Errorf("unclosed [")
			}
			n, err := strconv.Atoi(string(p.s[p.i:end]))
			if err != nil || n < 0 || n > 1000 {
				return nil, fmt.Errorf("bad list index %q", string(p.s[p.i:end]))
			}
			parts = append(parts, pathPart{index: n})
			p.i = end + 1
		case '=':
			if cur.Len() > 0 {
				if err := flush(); err != nil {
					return nil, err
				}
			}
			if len(parts) == 0 {
				return nil, fmt.Errorf("empty key")
			}
			return parts, nil
		case ',':
			return nil, fmt.Errorf("key %q has no value", cur.String())
		default:
			cur.WriteRune(c)
		}
	}
	return nil, fmt.Errorf("key %q has no value", cur.String())
}

// value reads up to the next plain comma: a scalar, or {a,b} as a list.
func (p *setParser) value() (interface{}, error) {
	if !p.done() && p.s[p.i] == '{' {
		p.i++
		var list []interface{}
		for {
			item, end := p.scalar(",}")
			list = append(list, p.typedValue(item))
			if end == '}' {
				break
			}
			if end == 0 {
				return nil, fmt.Errorf("unclosed {")
			}
		}
		if !p.done() {
			if p.s[p.i] != ',' {
				return nil, fmt.Errorf("text after } at offset %d", p.i)
			}
			p.i++
		}
		if len(list) == 1 && list[0] == "" {
			list = []interface{}{}
		}
		return list, nil
	}
	s, _ := p.scalar(",")
	return p.typedValue(s), nil
}

// scalar reads until one of the stop runes (consumed and returned) or the end (0).
func (p *setParser) scalar(stops string) (string, rune) {
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		if c == '\\' && !p.done() {
			b.WriteRune(p.s[p.i])
			p.i++
			continue
		}
		if strings.ContainsRune(stops, c) {
			return b.String(), c
		}
		b.WriteRune(c)
	}
	return b.String(), 0
}

func (p *setParser) typedValue(s string) interface{} {
	if !p.typed {
		return s
	}
	switch s {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	case "0":
		return int64(0)
	}
	// A leading zero keeps the string ("0755"), as in Helm.
	if len(s) > 0 && s[0] != '0' {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	}
	return s
}

// assign sets value at path in tree, creating maps and growing lists on the way.
func assign(tree map[string]interface{}, path []pathPart, value interface{}) error {
	var cur interface{} = tree
	set := func(v interface{}) {}
	for i, part := range path {
		last := i == len(path)-1
		if part.index < 0 {
			m, ok := cur.(map[string]interface{})
			if !ok {
				return fmt.Errorf("%q is under a list index, not a map", part.key)
			}
			if last {
				m[part.key] = value
				return nil
			}
			next, exists := m[part.key]
			if !exists || next == nil {
				if path[i+1].index >= 0 {
					next = []interface{}{}
				} else {
					next = map[string]interface{}{}
				}
				m[part.key] = next
			}
			key := part.key
			set = func(v interface{}) { m[key] = v }
			cur = next
			continue
		}
		list, ok := cur.([]interface{})
		if !ok {
			return fmt.Errorf("[%d] applied to a value that is not a list", part.index)
		}
		for len(list) <= part.index {
			list = append(list, nil)
		}
		set(list)
		if last {
			list[part.index] = value
			return nil
		}
		if list[part.index] == nil {
			if path[i+1].index >= 0 {
				list[part.index] = []interface{}{}
			} else {
				list[part.index] = map[string]interface{}{}
			}
		}
		idx := part.index
		set = func(v interface{}) { list[idx] = v }
		cur = list[part.index]
	}
	return nil
}
