// Package simtime formats simulated time the one way that the test
// environment's event log and the simulator's trace both print it.
package simtime

import (
	"fmt"
	"time"
)

// Offset formats d, a simulated time since the start, as +S.mmms.
func Offset(d time.Duration) string {
	ms := d.Milliseconds()
	return fmt.Sprintf("+%d.%03ds", ms/1000, ms%1000)
}
