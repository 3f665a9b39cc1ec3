package engine

import (
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
)

// waiters are the WaitJob calls of this process's clients that watch the
// jobs this node finishes (ratchet.FinishNotifier). The completions the
// node writes close their channels; with no watch registered, the write
// path reads one atomic counter.
type waiters struct {
	n  atomic.Int32 // watches registered
	mu sync.Mutex
	by map[uuid.UUID][]chan struct{}
}

// watch registers a watch of job id: the channel closes when finished(id)
// is called; stop ends the watch.
func (w *waiters) watch(id uuid.UUID) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	w.mu.Lock()
	if w.by == nil {
		w.by = map[uuid.UUID][]chan struct{}{}
	}
	w.by[id] = append(w.by[id], ch)
	w.n.Add(1)
	w.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			l := w.by[id]
			for i, c := range l {
				if c == ch {
					w.by[id] = append(l[:i:i], l[i+1:]...)
					w.n.Add(-1)
					break
				}
			}
			if len(w.by[id]) == 0 {
				delete(w.by, id)
			}
		})
	}
}

// finished wakes the watches of job id, which a write of this node just
// finished; they stay registered until stopped.
func (w *waiters) finished(id uuid.UUID) {
	if w.n.Load() == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.by[id] {
		select {
		case <-c:
		default:
			close(c)
		}
	}
}
