package cluster_test

import (
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

// The engine bugs the simulator plants in the engine's own parts, and the
// invariant that catches one: here, completions that do not carry their
// claim's fence. A build with -tags ratchet_bugs plants them
// (Scenario.EngineBug).
func ExampleEngineBugs() {
	fmt.Println(cluster.EngineBugs())
	fmt.Println("ignore-fence is caught by", cluster.EngineBugInvariant("ignore-fence"))
	// Output:
	// [adopt-drops-jobs batch-drops-last callback-as-dependency claim-check-keeps-body claim-past-free-slots claims-overlap-slots crash-budget-off-by-one debounce-window-doubled fair-key-by-args heartbeats-before-drain ignore-fence lost-claim-forgotten misfire-uncounted rate-limit-period-halved rescue-forgets-own-jobs rescue-ignores-grace retry-drops-batch retry-off-by-one run-after-failed-parent sequence-key-by-args skip-fresh-beat snooze-spends-attempt start-by-ignored start-by-sweep-early step-recorded-past-its-claim sweep-ahead-of-time task-limit-off-by-one timeout-late-write timeout-recorded-as-failure unique-key-ignores-period wait-resumed-before-it-began]
	// ignore-fence is caught by fence
}
