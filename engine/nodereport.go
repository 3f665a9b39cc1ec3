package engine

import (
	"runtime/debug"
	"strings"
	"sync"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// sdkModule is the module whose version a node reports.
const sdkModule = "github.com/ratchet-go/ratchet/sdk"

// repoModules is the prefix of the modules of Ratchet's repository.
const repoModules = "github.com/ratchet-go/ratchet/"

// sdkVersion is the version of the SDK module in the binary's build
// information: "(devel)" in a build inside Ratchet's repository (where a
// test binary lists no dependencies, the main module, one of Ratchet's,
// stands for it), "" when the binary has no build information.
var sdkVersion = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path == sdkModule {
			if d.Replace != nil && d.Replace.Version != "" {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	if bi.Main.Path == sdkModule || strings.HasPrefix(bi.Main.Path, repoModules) {
		return bi.Main.Version
	}
	return ""
})

// report is the node's report for a heartbeat (spi.NodeReportStore): its
// SDK version, concurrency, the jobs running now, its start time and its
// breakers. It is cheap: a count under the runs' lock and one slice of
// the breakers (none without breakers).
func (e *Engine) report() spi.NodeReport {
	r := spi.NodeReport{Version: sdkVersion(), Concurrency: e.opts.Concurrency,
		Running: max(0, e.opts.Concurrency-e.runs.Free()), StartedAt: e.startedAt}
	if bs := e.Breakers(); len(bs) > 0 {
		r.Breakers = make([]spi.NodeBreaker, len(bs))
		for i, b := range bs {
			r.Breakers[i] = spi.NodeBreaker{Service: b.Service, Poller: b.Poller, State: b.State.String(), OpenFor: b.OpenFor,
				FailureRateThreshold: b.Config.FailureRateThreshold, SlidingWindowSize: b.Config.SlidingWindowSize,
				MinimumCalls: b.Config.MinimumCalls, WaitDuration: b.Config.WaitDuration,
				PermittedCallsInHalfOpen: b.Config.PermittedCallsInHalfOpen}
		}
	}
	return r
}
