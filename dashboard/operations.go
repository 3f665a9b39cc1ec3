package dashboard

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// maxOperations is how many bulk operations the dashboard remembers; the
// oldest finished one is forgotten beyond.
const maxOperations = 200

// Operation states.
const (
	opMatching = "matching"
	opRunning  = "running"
	opDone     = "done"
	opFailed   = "failed"
)

// operation is a bulk action running (or run) in the background.
type operation struct {
	ID       string
	Action   ratchet.BulkAction
	Filter   string // the filters, as a query string
	Actor    string
	Bound    uuid.UUID
	Started  time.Time
	Finished time.Time
	State    string
	Total    int // the jobs matched (known once matched)
	Done     int // the jobs handled so far
	Changed  int
	Skipped  int
	Error    string
	AuditErr string // the audit log's append failed
}

// Running reports whether the operation has not finished.
func (o operation) Running() bool { return o.State == opMatching || o.State == opRunning }

// Percent is how far it has gone, 0 to 100.
func (o operation) Percent() int {
	if o.Total == 0 {
		if o.Running() {
			return 0
		}
		return 100
	}
	return o.Done * 100 / o.Total
}

// operations are the bulk operations in memory, by id.
type operations struct {
	mu    sync.Mutex
	byID  map[string]*operation
	order []string
}

func newOperations() *operations { return &operations{byID: map[string]*operation{}} }

// start records a new operation and returns its id.
func (ops *operations) start(o operation) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	o.ID, o.State = hex.EncodeToString(b), opMatching
	ops.mu.Lock()
	defer ops.mu.Unlock()
	ops.byID[o.ID] = &o
	ops.order = append(ops.order, o.ID)
	for i := 0; len(ops.byID) > maxOperations && i < len(ops.order); i++ {
		if old := ops.byID[ops.order[i]]; old != nil && !old.Running() {
			delete(ops.byID, ops.order[i])
			ops.order = append(ops.order[:i], ops.order[i+1:]...)
			i--
		}
	}
	return o.ID
}

// update changes operation id under the lock.
func (ops *operations) update(id string, fn func(o *operation)) {
	ops.mu.Lock()
	defer ops.mu.Unlock()
	if o := ops.byID[id]; o != nil {
		fn(o)
	}
}

// get returns a copy of operation id.
func (ops *operations) get(id string) (operation, bool) {
	ops.mu.Lock()
	defer ops.mu.Unlock()
	o := ops.byID[id]
	if o == nil {
		return operation{}, false
	}
	return *o, true
}

// recent returns copies of the operations, newest first.
func (ops *operations) recent(n int) []operation {
	ops.mu.Lock()
	defer ops.mu.Unlock()
	var out []operation
	for i := len(ops.order) - 1; i >= 0 && len(out) < n; i-- {
		if o := ops.byID[ops.order[i]]; o != nil {
			out = append(out, *o)
		}
	}
	return out
}
