package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// waiters are the WaitJob calls that watch for the end of jobs this node
// may finish (ratchet.FinishNotifier): those of this process's clients,
// whose channels the node's completions close, and those that other
// processes announced (spi.FinishPublisher), whose ends the node
// publishes. With no watch of either kind, the write path reads one
// atomic counter.
type waiters struct {
	n  atomic.Int32 // local watches registered, plus remote ones kept
	mu sync.Mutex
	by map[uuid.UUID][]chan struct{}
	// remote holds the watches other processes announced, until when
	// each is kept (spi.WatchTTL after its last announcement); the lapsed
	// ones are dropped at the next announcement, or by the first write
	// after prune.
	remote map[uuid.UUID]time.Time
	prune  time.Time
}

// watch registers a watch of job id: the channel closes when finished(id)
// or wake(id) is called; stop ends the watch.
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

// watchRemote keeps the watches of ids that another process announced
// until until, and forgets the ones whose time passed by now.
func (w *waiters) watchRemote(ids []uuid.UUID, now, until time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.remote == nil {
		w.remote = map[uuid.UUID]time.Time{}
	}
	w.pruneLocked(now)
	if w.prune.IsZero() {
		w.prune = until
	}
	for _, id := range ids {
		if _, ok := w.remote[id]; !ok {
			w.n.Add(1)
		}
		w.remote[id] = until
	}
}

// finished wakes the local watches of job id, which a write of this node
// just finished at now (they stay registered until stopped), and reports
// whether another process watches it: the node then publishes the end,
// and forgets that watch.
func (w *waiters) finished(id uuid.UUID, now time.Time) (remote bool) {
	if w.n.Load() == 0 {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closeLocked(id)
	if !w.prune.IsZero() && now.After(w.prune) {
		w.pruneLocked(now)
	}
	if t, ok := w.remote[id]; ok {
		delete(w.remote, id)
		w.n.Add(-1)
		return !now.After(t)
	}
	return false
}

// wake wakes the local watches of the jobs of ids, which another node
// reported finished.
func (w *waiters) wake(ids []uuid.UUID) {
	if w.n.Load() == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		w.closeLocked(id)
	}
}

func (w *waiters) closeLocked(id uuid.UUID) {
	for _, c := range w.by[id] {
		select {
		case <-c:
		default:
			close(c)
		}
	}
}

// pruneLocked drops the remote watches lapsed by now, and sets when to
// look again: at the earliest time one left lapses (zero for none).
func (w *waiters) pruneLocked(now time.Time) {
	w.prune = time.Time{}
	for id, t := range w.remote {
		switch {
		case now.After(t):
			delete(w.remote, id)
			w.n.Add(-1)
		case w.prune.IsZero() || t.Before(w.prune):
			w.prune = t
		}
	}
}
