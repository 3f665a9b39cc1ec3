package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// eventOrder keeps each job's events in order on this node. A completion's
// event is published after its write returns, and by then the write may
// have made the job due again (a retry): the poller could claim it and
// publish the next run's started event (then its outcome) first. So while
// a job's retry is queued or being written and its event not yet
// published, the job is held, and the executor waits (waitOrderBound at
// most) before it starts another run of it. It holds only retries, and
// only while someone subscribes; otherwise a completion costs one atomic
// read, and a run's start another.
type eventOrder struct {
	n  atomic.Int32 // jobs held
	mu sync.Mutex
	by map[uuid.UUID]*heldJob
}

// heldJob is a job whose completion events are not all published yet.
type heldJob struct {
	count int
	done  chan struct{} // closed when count reaches 0
}

// waitOrderBound bounds the executor's wait for a held job: a publish
// that never comes (a completion never written, at a stop) delays the
// next run at most this long.
const waitOrderBound = time.Second

// hold marks job id's completion as not yet published.
func (o *eventOrder) hold(id uuid.UUID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.by == nil {
		o.by = map[uuid.UUID]*heldJob{}
	}
	h := o.by[id]
	if h == nil {
		h = &heldJob{done: make(chan struct{})}
		o.by[id] = h
		o.n.Add(1)
	}
	h.count++
}

// release marks one completion of job id published.
func (o *eventOrder) release(id uuid.UUID) {
	if o.n.Load() == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	h := o.by[id]
	if h == nil {
		return
	}
	if h.count--; h.count == 0 {
		close(h.done)
		delete(o.by, id)
		o.n.Add(-1)
	}
}

// wait returns once job id holds no unpublished completion, or after
// waitOrderBound, or when ctx ends.
func (o *eventOrder) wait(ctx context.Context, id uuid.UUID) {
	if o.n.Load() == 0 {
		return
	}
	o.mu.Lock()
	h := o.by[id]
	o.mu.Unlock()
	if h == nil {
		return
	}
	t := time.NewTimer(waitOrderBound)
	defer t.Stop()
	select {
	case <-h.done:
	case <-t.C:
	case <-ctx.Done():
	}
}
