// helm-render renders a Helm chart the way `helm template` does, for koord's tests on machines
// without Helm (Debian ships sprig but not Helm): one multi-document YAML on stdout, each object
// under a "# Source:" line, in Helm's install order by kind.
//
//	helm-render [--release NAME] [--namespace NS] [--kube-version v1.20.2] [--api-versions G/V]
//	            [-f values.yaml]... [--set a.b=c]... [--set-string a.b=c]... CHART_DIR
//
// Not shipped; tests/helm-render/build.sh builds it.
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	yaml "gopkg.in/yaml.v2"
)

// override is one -f, --set or --set-string. Helm applies the files, then every --set, then every
// --set-string, each kind in command-line order.
type override struct {
	kind string // "file", "set", "set-string"
	arg  string
}

type overrides struct {
	kind string
	list *[]override
}

func (o overrides) String() string { return "" }
func (o overrides) Set(v string) error {
	*o.list = append(*o.list, override{o.kind, v})
	return nil
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "helm-render: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("helm-render", flag.ExitOnError)
	release := fs.String("release", "release-name", "the release name (.Release.Name)")
	namespace := fs.String("namespace", "default", "the release namespace (.Release.Namespace)")
	kubeVer := fs.String("kube-version", "v1.20.2",
		"the cluster's version (.Capabilities.KubeVersion)")
	var extraAPIs stringList
	fs.Var(&extraAPIs, "api-versions",
		"an API group/version the cluster has, besides 1.20's built-in ones")
	var ovs []override
	fs.Var(overrides{"file", &ovs}, "f", "a values file (repeatable)")
	fs.Var(overrides{"file", &ovs}, "values", "a values file (repeatable)")
	fs.Var(overrides{"set", &ovs}, "set", "values as a.b=c,d={x,y} (repeatable)")
	fs.Var(overrides{"set-string", &ovs}, "set-string", "as --set, every value a string")
	// Flags may come before or after the chart, as with helm.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	if len(positional) != 1 {
		fmt.Fprintln(os.Stderr, "usage: helm-render [flags] CHART_DIR")
		os.Exit(2)
	}

	c, err := loadChart(positional[0])
	if err != nil {
		return err
	}
	values := c.values
	order := map[string]int{"file": 0, "set": 1, "set-string": 2}
	sort.SliceStable(ovs, func(i, j int) bool { return order[ovs[i].kind] < order[ovs[j].kind] })
	for _, o := range ovs {
		var m map[string]interface{}
		if o.kind == "file" {
			m, err = readYAMLMap(o.arg)
		} else {
			m, err = parseSet(o.arg, o.kind == "set")
		}
		if err != nil {
			return err
		}
		mergeInto(values, m)
	}
	kv, err := parseKubeVersion(*kubeVer)
	if err != nil {
		return err
	}
	top := map[string]interface{}{
		"Values": values,
		"Chart":  c.chartObject(),
		"Release": map[string]interface{}{
			"Name": *release, "Namespace": *namespace, "Service": "Helm",
			"IsInstall": true, "IsUpgrade": false, "Revision": 1,
		},
		"Capabilities": map[string]interface{}{
			"KubeVersion": kv,
			"APIVersions": append(apiVersions(defaultAPIVersions), extraAPIs...),
		},
		"Files": files{c.dir},
	}
	e := &engine{sources: c.templates}
	out, err := e.render(top)
	if err != nil {
		return err
	}
	docs, err := splitAndSort(out)
	if err != nil {
		return err
	}
	for _, d := range docs {
		fmt.Printf("---\n# Source: %s\n%s\n", d.source, d.text)
	}
	return nil
}

type manifest struct {
	source string
	kind   string
	text   string
}

// Helm's releaseutil splits a template's output on lines of ---.
var docSeparator = regexp.MustCompile(`(?:^|\s*\n)---\s*`)

// Helm's InstallOrder: what others depend on comes first (namespaces, then CRDs and RBAC before
// workloads); kinds not listed follow, by kind name.
var installOrder = []string{
	"Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
	"PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass",
	"PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole",
	"ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList",
	"RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod", "ReplicationController",
	"ReplicaSet", "Deployment", "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob",
	"IngressClass", "Ingress", "APIService",
}

// splitAndSort cuts each template's output into documents, drops empty ones, checks that each
// is YAML with a kind (Helm refuses the release otherwise) and orders them for installing.
func splitAndSort(rendered map[string]string) ([]manifest, error) {
	rank := map[string]int{}
	for i, k := range installOrder {
		rank[k] = i
	}
	names := make([]string, 0, len(rendered))
	for n := range rendered {
		names = append(names, n)
	}
	sort.Strings(names)
	var docs []manifest
	for _, name := range names {
		for _, part := range docSeparator.Split(rendered[name], -1) {
			text := strings.TrimSpace(part)
			if text == "" || onlyComments(text) {
				continue
			}
			var head struct {
				Kind string `yaml:"kind"`
			}
			if err := yaml.Unmarshal([]byte(text), &head); err != nil {
				return nil, fmt.Errorf("YAML parse error in %s: %v\n%s", name, err, text)
			}
			if head.Kind == "" {
				return nil, fmt.Errorf("%s: a document without kind:\n%s", name, text)
			}
			docs = append(docs, manifest{source: name, kind: head.Kind, text: text})
		}
	}
	sort.SliceStable(docs, func(i, j int) bool {
		ri, iok := rank[docs[i].kind]
		rj, jok := rank[docs[j].kind]
		switch {
		case iok && jok:
			return ri < rj
		case iok != jok:
			return iok
		default:
			return docs[i].kind < docs[j].kind
		}
	})
	return docs, nil
}

func onlyComments(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}
