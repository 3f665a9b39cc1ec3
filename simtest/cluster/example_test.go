package cluster_test

import (
	"errors"
	"fmt"

	"github.com/ratchet-go/ratchet/simtest/cluster"
)

// One simulation: three nodes over one memory store under crashes, stalls,
// graceful stops and clock jumps, every invariant checked after every step.
func ExampleSimulate() {
	rep, err := cluster.Simulate(42, cluster.Scenario{Steps: 1000, Nodes: 3})
	if err != nil {
		fmt.Println(err) // a *cluster.Violation: seed, invariant, trace suffix
		return
	}
	again, _ := cluster.Simulate(42, cluster.Scenario{Steps: 1000, Nodes: 3})
	fmt.Println("nodes:", rep.Nodes)
	fmt.Println("every job terminal:", rep.Final["PENDING"]+rep.Final["RUNNING"] == 0)
	fmt.Println("same seed, same trace:", rep.TraceHash == again.TraceHash)
	// Output:
	// nodes: 3
	// every job terminal: true
	// same seed, same trace: true
}

// A planted engine bug is caught: here, completions that do not carry
// their claim's fence.
func ExampleEngineBugs() {
	fmt.Println(cluster.EngineBugs())
	_, err := cluster.Simulate(1, cluster.Scenario{Steps: 500, EngineBug: "ignore-fence"})
	var v *cluster.Violation
	if errors.As(err, &v) {
		fmt.Println("caught by", v.Invariant)
	}
	// Output:
	// [batch-drops-last callback-as-dependency claim-past-free-slots heartbeats-before-drain ignore-fence misfire-uncounted retry-off-by-one run-after-failed-parent skip-fresh-beat]
	// caught by fence
}
