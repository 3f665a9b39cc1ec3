package nodecore_test

import (
	"fmt"
	"time"

	"github.com/ratchet-go/ratchet/internal/nodecore"
)

// The poller's decision is a pure function: here, a pool of 16 slots with 2
// free waits for a quarter of a batch to free up before it claims.
func ExamplePollPolicy_Next() {
	p := nodecore.PollPolicy{Slots: 16, Batch: 16, Gather: 50 * time.Millisecond, HeartbeatInterval: 10 * time.Second}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	d := p.Next(nodecore.PollState{Free: 2, Now: now, LastBeat: now.Add(-time.Second)})
	fmt.Println(d.Action == nodecore.PollGather, d.Wait)
	d = p.Next(nodecore.PollState{Free: 2, Now: now.Add(50 * time.Millisecond), GatherStart: now, LastBeat: now.Add(-time.Second)})
	fmt.Println(d.Action == nodecore.PollClaim, d.Limit)
	fmt.Println(nodecore.StopOrder())
	// Output:
	// true 50ms
	// true 2
	// [stop claiming drain and release flush completions stop heartbeats deregister]
}
