package main

// The template engine: Go's text/template with sprig's functions and the ones Helm adds
// (include, tpl, required, toYaml, fromYaml, toJson, fromJson, lookup), over every file of the
// chart's templates/ parsed into one set, so a define in _helpers.tpl serves every template.

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"text/template"

	sprig "github.com/Masterminds/sprig"
	yaml "gopkg.in/yaml.v2"
)

// Helm's limit on nested include calls of one name, which catches a define that includes itself.
const maxIncludeDepth = 1000

type engine struct {
	// Template sources by name ("koordinator/templates/x.yaml"), parsed together.
	sources map[string]string
}

func (e *engine) names() []string {
	names := make([]string, 0, len(e.sources))
	for n := range e.sources {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// build parses every source into a fresh set whose include and tpl see that same set.
func (e *engine) build() (*template.Template, error) {
	t := template.New("gotpl")
	depth := map[string]int{}
	funcs := sprig.TxtFuncMap()
	// Helm leaves the environment out of charts.
	delete(funcs, "env")
	delete(funcs, "expandenv")
	funcs["toYaml"] = toYAML
	funcs["fromYaml"] = fromYAML
	funcs["toJson"] = toJSON
	funcs["fromJson"] = fromJSON
	funcs["required"] = required
	// helm template talks to no cluster: lookup finds nothing, as there.
	funcs["lookup"] = func(apiVersion, kind, namespace, name string) (map[string]interface{}, error) {
		return map[string]interface{}{}, nil
	}
	funcs["include"] = func(name string, data interface{}) (string, error) {
		if depth[name] >= maxIncludeDepth {
			return "", fmt.Errorf("include %q: nested more than %d deep", name, maxIncludeDepth)
		}
		depth[name]++
		defer func() { depth[name]-- }()
		var b strings.Builder
		err := t.ExecuteTemplate(&b, name, data)
		return b.String(), err
	}
	funcs["tpl"] = func(text string, data interface{}) (string, error) {
		inner, err := e.build()
		if err != nil {
			return "", err
		}
		if _, err := inner.New("tpl").Parse(text); err != nil {
			return "", fmt.Errorf("tpl: %v", err)
		}
		var b strings.Builder
		err = inner.ExecuteTemplate(&b, "tpl", data)
		return strings.ReplaceAll(b.String(), "<no value>", ""), err
	}
	t.Funcs(funcs).Option("missingkey=zero")
	for _, name := range e.names() {
		if _, err := t.New(name).Parse(e.sources[name]); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// render executes every template that is not a partial (_*) or NOTES.txt, each with its own
// .Template, and returns the outputs by template name.
func (e *engine) render(top map[string]interface{}) (map[string]string, error) {
	t, err := e.build()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, name := range e.names() {
		base := path.Base(name)
		if strings.HasPrefix(base, "_") || base == "NOTES.txt" {
			continue
		}
		data := make(map[string]interface{}, len(top)+1)
		for k, v := range top {
			data[k] = v
		}
		data["Template"] = map[string]interface{}{"Name": name, "BasePath": path.Dir(name)}
		var b strings.Builder
		if err := t.ExecuteTemplate(&b, name, data); err != nil {
			return nil, err
		}
		// missingkey=zero prints <no value> for a missing map key; Helm blanks it.
		out[name] = strings.ReplaceAll(b.String(), "<no value>", "")
	}
	return out, nil
}

// toYAML is Helm's: the YAML of v without its final newline, or "" when v cannot be written.
func toYAML(v interface{}) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

// fromYAML returns a map, or {"Error": message} as Helm does.
func fromYAML(s string) map[string]interface{} {
	var v interface{}
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return map[string]interface{}{"Error": err.Error()}
	}
	m, ok := stringKeys(v).(map[string]interface{})
	if !ok {
		return map[string]interface{}{}
	}
	return m
}

func toJSON(v interface{}) string {
	b, err := json.Marshal(stringKeys(v))
	if err != nil {
		return ""
	}
	return string(b)
}

func fromJSON(s string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

// required fails the render with msg when v is missing or an empty string.
func required(msg string, v interface{}) (interface{}, error) {
	if v == nil {
		return nil, fmt.Errorf("%s", msg)
	}
	if s, ok := v.(string); ok && s == "" {
		return nil, fmt.Errorf("%s", msg)
	}
	return v, nil
}
