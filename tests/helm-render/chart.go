package main

// A chart directory as Helm loads it: Chart.yaml, values.yaml, templates/ and the other files for
// .Files. Symbolic links are followed, as Helm's loader follows them (koord's chart has none: its
// CRDs are its own files, and deploy/crds links to them).

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"
)

type chart struct {
	dir      string
	name     string
	metadata map[string]interface{}
	values   map[string]interface{}
	// Template sources keyed "<chart>/templates/<path>", as Helm names them.
	templates map[string]string
}

func loadChart(dir string) (*chart, error) {
	meta, err := readYAMLMap(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return nil, err
	}
	name, _ := meta["name"].(string)
	if name == "" {
		return nil, fmt.Errorf("%s/Chart.yaml: no name", dir)
	}
	values := map[string]interface{}{}
	if _, err := os.Stat(filepath.Join(dir, "values.yaml")); err == nil {
		if values, err = readYAMLMap(filepath.Join(dir, "values.yaml")); err != nil {
			return nil, err
		}
	}
	c := &chart{dir: dir, name: name, metadata: meta, values: values, templates: map[string]string{}}
	addTemplate := func(rel, full string) error {
		raw, err := os.ReadFile(full)
		if err != nil {
			return err
		}
		c.templates[name+"/"+rel] = string(raw)
		return nil
	}
	err = walkFollowingLinks(filepath.Join(dir, "templates"), "templates", addTemplate)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// walkFollowingLinks calls fn for every regular file under dir (rel is relative to the chart).
func walkFollowingLinks(dir, rel string, fn func(rel, full string) error) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		full := filepath.Join(dir, e.Name())
		info, err := os.Stat(full)
		if err != nil {
			return err
		}
		sub := path.Join(rel, e.Name())
		if info.IsDir() {
			if err := walkFollowingLinks(full, sub, fn); err != nil {
				return err
			}
		} else if info.Mode().IsRegular() {
			if err := fn(sub, full); err != nil {
				return err
			}
		}
	}
	return nil
}

// chartObject is .Chart: Chart.yaml's fields under Helm's Go names (name -> Name,
// appVersion -> AppVersion, apiVersion -> APIVersion).
func (c *chart) chartObject() map[string]interface{} {
	out := map[string]interface{}{}
	for k, v := range c.metadata {
		if k == "apiVersion" {
			out["APIVersion"] = v
			continue
		}
		r := []rune(k)
		r[0] = unicode.ToUpper(r[0])
		out[string(r)] = v
	}
	return out
}

// files is .Files: Get reads a chart file by its path in the chart, "" when there is none (as
// in Helm). templates/, Chart.yaml and values.yaml are not files in Helm's sense.
type files struct{ dir string }

func (f files) Get(name string) string {
	clean := path.Clean(name)
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") ||
		strings.HasPrefix(clean, "templates/") || clean == "Chart.yaml" || clean == "values.yaml" {
		return ""
	}
	raw, err := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(clean)))
	if err != nil {
		return ""
	}
	return string(raw)
}

// kubeVersion is .Capabilities.KubeVersion.
type kubeVersion struct {
	Version    string
	Major      string
	Minor      string
	GitVersion string
}

func (k kubeVersion) String() string { return k.Version }

func parseKubeVersion(v string) (kubeVersion, error) {
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return kubeVersion{}, fmt.Errorf("--kube-version %q: want vMAJOR.MINOR[.PATCH]", v)
	}
	return kubeVersion{Version: v, Major: parts[0], Minor: parts[1], GitVersion: v}, nil
}

// apiVersions is .Capabilities.APIVersions; Has is what charts call.
type apiVersions []string

func (a apiVersions) Has(v string) bool {
	for _, x := range a {
		if x == v {
			return true
		}
	}
	return false
}

// The built-in group versions of Kubernetes 1.20 that charts ask about; --api-versions adds more.
var defaultAPIVersions = []string{
	"v1", "apps/v1", "batch/v1", "batch/v1beta1", "policy/v1beta1", "rbac.authorization.k8s.io/v1",
	"admissionregistration.k8s.io/v1", "apiextensions.k8s.io/v1", "coordination.k8s.io/v1",
	"scheduling.k8s.io/v1", "networking.k8s.io/v1", "storage.k8s.io/v1",
}
