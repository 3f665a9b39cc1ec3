//go:build !ratchet_bugs

package memory

import (
	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// planted is empty in a normal build: no defect can be planted.
type planted struct{}

// lostConnection is nil: see bugs.go.
func (*Store) lostConnection() error { return nil }

// decodeErr is nil: every job decodes in a normal build (bugs.go).
func (*Store) decodeErr(uuid.UUID) error { return nil }

// enterClaim counts nothing in a normal build (bugs.go).
func (*Store) enterClaim() func() { return func() {} }

// The planted races of bugs.go.
func (*Store) claimRace() map[string]int             { return nil }
func (*Store) leaseRace()                            {}
func (*Store) claimSplit(spi.ClaimParams) []*spi.Job { return nil }
func (*Store) awaitResolution(*spi.Job)              {}
func (*Store) pause()                                {}

// bug is false in a normal build, and the compiler drops the code it
// guards (see bugs.go).
func (*Store) bug(string) bool { return false }

// likePrefix is a planted defect's (bugs.go).
func likePrefix(string, string) bool { return false }

// logBugs is false: see bugs.go.
func (*Store) logBugs() bool { return false }

// appendLogBugs is a planted defect's (bugs.go).
func appendLogBugs(_ *Store, log []spi.LogLine, _ spi.LogAppend) []spi.LogLine { return log }

// rewriteBlind is a planted defect's (bugs.go).
func (*Store) rewriteBlind([]spi.ValueRewrite, []bool) {}

// insertBugs plants nothing in a normal build (bugs.go).
func (*Store) insertBugs([]*spi.Job) ([]spi.InsertResult, bool, error) { return nil, false, nil }

// lastOfTies is a planted defect's (bugs.go).
func lastOfTies(_ *levelHeap, e *entry) *entry { return e }

// enterLease counts nothing in a normal build (bugs.go).
func (*Store) enterLease() func() { return func() {} }

// enterUnique counts nothing in a normal build (bugs.go).
func (*Store) enterUnique([]*spi.Job) func() { return func() {} }

// uniqueRace is a planted defect's (bugs.go).
func (*Store) uniqueRace() {}
