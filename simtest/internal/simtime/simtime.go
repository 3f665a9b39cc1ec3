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
