package sqlcore

import (
	"github.com/google/uuid"
)

// StateWrite is one write of spi.JobStateStore: an init (Init, creating
// version 0) or a compare-and-set update of version Expected, fenced by the
// claim sequence *Fence (the job must be RUNNING with it) unless Fence is
// nil. State is never nil.
type StateWrite struct {
	JobID     uuid.UUID
	Namespace string
	State     []byte
	Expected  int64
	Init      bool
	Fence     *int64
}
