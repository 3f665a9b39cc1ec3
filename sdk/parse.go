package ratchet

import (
	"strconv"
	"strings"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// ParseStatus returns the job state named by s, ignoring case
// ("failed" is StatusFailed). Anything else is an error wrapping
// ErrInvalidArgument that names s and lists the states: what an operator
// tool (the ratchet command, the dashboard) answers a filter with.
func ParseStatus(s string) (Status, error) {
	st := spi.Status(strings.ToUpper(strings.TrimSpace(s)))
	if !st.Valid() {
		return "", invalidArg("%q is not a job state (PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED, BLOCKED, SKIPPED, WAITING)", s)
	}
	return st, nil
}

// ParsePriority returns the priority named by s, ignoring case ("high"),
// or given by its number ("3"). Anything else is an error wrapping
// ErrInvalidArgument that names s and lists the priorities.
func ParsePriority(s string) (Priority, error) {
	name := strings.TrimSpace(s)
	for p := spi.PriorityLowest; p <= spi.PriorityCritical; p++ {
		if strings.EqualFold(name, p.String()) || name == strconv.Itoa(int(p)) {
			return p, nil
		}
	}
	return 0, invalidArg("%q is not a priority (%s)", s, priorityNames())
}

func priorityNames() string {
	names := make([]string, 0, spi.NumPriorities)
	for p := spi.PriorityLowest; p <= spi.PriorityCritical; p++ {
		names = append(names, p.String())
	}
	return strings.Join(names, ", ")
}
