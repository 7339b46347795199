// koord-bench-peer-informer: client-go's shared informers on Pods and Nodes, measured the way
// koord's informer benchmark measures its own, so the two can be compared on one cluster.
//
// Built by tests/bench/peers/build.sh inside Debian's kubernetes 1.20.2 source tree (GOPATH mode,
// vendored client-go), so it is the client-go that the test cluster's own components use.
// Prints one JSON line on stdout; diagnostics go to stderr; exit 1 on failure, 2 on bad flags.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

const progName = "koord-bench-peer-informer"

// Set by build.sh with -X; the default names the tree this file is written for.
var k8sVersion = "v1.20.2"

type report struct {
	Peer               string  `json:"peer"`
	Version            string  `json:"version"`
	Objects            int     `json:"objects"`
	Pods               int     `json:"pods"`
	Nodes              int     `json:"nodes"`
	SyncSeconds        float64 `json:"sync_seconds"`
	ObjectsPerSecond   float64 `json:"objects_per_second"`
	HeapBytes          int64   `json:"heap_bytes"`
	HeapBytesPerObject float64 `json:"heap_bytes_per_object"`
	RSSPeakBytes       int64   `json:"rss_peak_bytes"`
	RSSBytes           int64   `json:"rss_bytes"`
	CPUSeconds         float64 `json:"cpu_seconds"`
	// The fields below qualify the ones above; a reader comparing peers can ignore them.
	ProcessCPUSeconds float64 `json:"process_cpu_seconds"`
	HeapBaselineBytes int64   `json:"heap_baseline_bytes"`
	ContentType       string  `json:"content_type"`
	GoVersion         string  `json:"go_version"`
	WatchSeconds      float64 `json:"watch_seconds,omitempty"`
	WatchEvents       *int64  `json:"watch_events,omitempty"`
	WatchAdds         *int64  `json:"watch_adds,omitempty"`
	WatchUpdates      *int64  `json:"watch_updates,omitempty"`
	WatchDeletes      *int64  `json:"watch_deletes,omitempty"`
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, progName+": error: "+format+"\n", args...)
	os.Exit(1)
}

func usageError(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, progName+": "+format+"\n", args...)
	os.Exit(2)
}

// retainedHeap is what is still reachable: two collections, because the first one may leave
// objects that only became garbage through finalizers or sweeping behind it.
func retainedHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// cpuSeconds is the process's user plus system time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fail("getrusage: %v", err)
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// residentBytes reads VmHWM (peak resident set) and VmRSS from /proc/self/status.
func residentBytes() (peak, now int64) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		fail("reading memory usage: %v", err)
	}
	defer f.Close()
	kib := func(line string) int64 {
		fields := strings.Fields(line)
		if len(fields) != 3 || fields[2] != "kB" {
			fail("unexpected line in /proc/self/status: %q", line)
		}
		v, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			fail("unexpected line in /proc/self/status: %q", line)
		}
		return v * 1024
	}
	peak, now = -1, -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "VmHWM:"):
			peak = kib(line)
		case strings.HasPrefix(line, "VmRSS:"):
			now = kib(line)
		}
	}
	if err := sc.Err(); err != nil {
		fail("reading /proc/self/status: %v", err)
	}
	if peak < 0 || now < 0 {
		fail("no VmHWM/VmRSS in /proc/self/status")
	}
	return peak, now
}

// eventCounts counts what the informers deliver to a handler once measuring is over.
type eventCounts struct{ adds, updates, deletes int64 }

func (c *eventCounts) OnAdd(interface{})                 { atomic.AddInt64(&c.adds, 1) }
func (c *eventCounts) OnUpdate(interface{}, interface{}) { atomic.AddInt64(&c.updates, 1) }
func (c *eventCounts) OnDelete(interface{})              { atomic.AddInt64(&c.deletes, 1) }

func allSynced(synced []cache.InformerSynced) bool {
	for _, f := range synced {
		if !f() {
			return false
		}
	}
	return true
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (required)")
	resources := flag.String("resources", "pods,nodes", "comma-separated resources to inform on: pods, nodes")
	qps := flag.Float64("qps", 1000, "client QPS limit (high, so the client is never throttled)")
	burst := flag.Int("burst", 1000, "client burst limit")
	contentType := flag.String("content-type", "application/json",
		"wire format: application/json or application/vnd.kubernetes.protobuf")
	syncTimeout := flag.Duration("sync-timeout", 10*time.Minute, "give up when the caches have not synced by then")
	watchSeconds := flag.Float64("watch-seconds", 0,
		"after sync, keep watching this long and report the events delivered (0: exit at once)")
	flag.Parse()
	if flag.NArg() != 0 {
		usageError("unexpected argument %q", flag.Arg(0))
	}
	if *kubeconfig == "" {
		usageError("--kubeconfig is required")
	}
	if *qps <= 0 || *burst <= 0 {
		usageError("--qps and --burst must be positive")
	}
	if *watchSeconds < 0 {
		usageError("--watch-seconds must not be negative")
	}
	if *contentType != "application/json" && *contentType != "application/vnd.kubernetes.protobuf" {
		usageError("--content-type must be application/json or application/vnd.kubernetes.protobuf")
	}
	wantPods, wantNodes := false, false
	for _, r := range strings.Split(*resources, ",") {
		switch strings.TrimSpace(r) {
		case "pods":
			wantPods = true
		case "nodes":
			wantNodes = true
		default:
			usageError("unknown resource %q in --resources (pods, nodes)", r)
		}
	}

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail("loading %s: %v", *kubeconfig, err)
	}
	config.QPS = float32(*qps)
	config.Burst = *burst
	config.ContentType = *contentType
	if *contentType != "application/json" {
		config.AcceptContentTypes = *contentType + ",application/json"
	}
	config.UserAgent = progName + "/" + k8sVersion
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fail("creating the client: %v", err)
	}

	// Everything allocated before this point (client, TLS config, flag parsing) is not the
	// informers' and is subtracted.
	heapBefore := retainedHeap()
	cpuBefore := cpuSeconds()
	start := time.Now()

	factory := informers.NewSharedInformerFactory(client, 0)
	var podInformer, nodeInformer cache.SharedIndexInformer
	var synced []cache.InformerSynced
	if wantPods {
		podInformer = factory.Core().V1().Pods().Informer()
		synced = append(synced, podInformer.HasSynced)
	}
	if wantNodes {
		nodeInformer = factory.Core().V1().Nodes().Informer()
		synced = append(synced, nodeInformer.HasSynced)
	}
	stop := make(chan struct{})
	factory.Start(stop)

	// cache.WaitForCacheSync polls every 100ms, which would round every sync up to a tenth of a
	// second: poll the same HasSynced functions every millisecond instead.
	deadline := time.Now().Add(*syncTimeout)
	for !allSynced(synced) {
		if time.Now().After(deadline) {
			fail("caches not synced after %v (is the API server at %s reachable?)", *syncTimeout, config.Host)
		}
		time.Sleep(time.Millisecond)
	}
	syncSeconds := time.Since(start).Seconds()
	cpuSync := cpuSeconds() - cpuBefore

	rep := report{
		Peer:        "client-go",
		Version:     k8sVersion,
		SyncSeconds: syncSeconds,
		CPUSeconds:  cpuSync,
		ContentType: *contentType,
		GoVersion:   runtime.Version(),
	}
	if podInformer != nil {
		rep.Pods = len(podInformer.GetStore().ListKeys())
	}
	if nodeInformer != nil {
		rep.Nodes = len(nodeInformer.GetStore().ListKeys())
	}
	rep.Objects = rep.Pods + rep.Nodes
	heapAfter := retainedHeap()
	rep.HeapBaselineBytes = heapBefore
	rep.HeapBytes = heapAfter - heapBefore
	if rep.Objects > 0 {
		rep.HeapBytesPerObject = float64(rep.HeapBytes) / float64(rep.Objects)
	}
	if syncSeconds > 0 {
		rep.ObjectsPerSecond = float64(rep.Objects) / syncSeconds
	}
	rep.RSSPeakBytes, rep.RSSBytes = residentBytes()

	if *watchSeconds > 0 {
		// A handler added to a running informer first gets one synthetic add per cached object,
		// replayed while the informer holds its deltas back: those are not watch events.
		var counts eventCounts
		var replayed int64
		for _, inf := range []cache.SharedIndexInformer{podInformer, nodeInformer} {
			if inf != nil {
				replayed += int64(len(inf.GetStore().ListKeys()))
				inf.AddEventHandler(&counts)
			}
		}
		fmt.Fprintf(os.Stderr, "%s: synced %d objects in %.3fs; watching for %gs\n", progName,
			rep.Objects, syncSeconds, *watchSeconds)
		time.Sleep(time.Duration(*watchSeconds * float64(time.Second)))
		adds := atomic.LoadInt64(&counts.adds) - replayed
		if adds < 0 {
			adds = 0 // objects deleted between counting and joining were not replayed
		}
		updates, deletes := atomic.LoadInt64(&counts.updates), atomic.LoadInt64(&counts.deletes)
		events := adds + updates + deletes
		rep.WatchSeconds = *watchSeconds
		rep.WatchEvents, rep.WatchAdds, rep.WatchUpdates, rep.WatchDeletes = &events, &adds, &updates, &deletes
	}
	rep.ProcessCPUSeconds = cpuSeconds()
	close(stop)

	line, err := json.Marshal(rep)
	if err != nil {
		fail("encoding the report: %v", err)
	}
	fmt.Println(string(line))
}
