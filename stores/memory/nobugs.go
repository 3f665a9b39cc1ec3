//go:build !ratchet_bugs

package memory

import "github.com/ratchet-go/ratchet/sdk/spi"

// planted is empty in a normal build: no defect can be planted.
type planted struct{}

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
