package cluster

import (
	"bytes"
	"fmt"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/simtest/internal/simtime"
)

// Debounced submissions (ratchet.WithDebounce): half the unique
// workload's arrivals are a debounced submission of task "work", through
// the SDK's client, under one of two debounce keys with a window of 8 s:
// trailing (the job due at the window's end), with the last arguments, or
// leading (due at once, held whatever its state). The three modes share
// their keys, as the SDK derives them from the task and the key alone.
//
// The invariant, debounce: the model keeps each key's holder and the end
// of its window (the holder's submission time plus the window). A
// submission made before that end joins the holder (returns its id and
// writes nothing) when it is leading, or when the holder is PENDING;
// with the last arguments, the holder's payload is then the submission's.
// Any other submission writes a job of its own, due at its window's end
// (at once when leading), which holds the key from then on.
const invDebounce = "debounce"

// debounceWindow is the debounce workload's window.
const debounceWindow = 8 * time.Second

// dwindow is a debounce key's holder and the end of its window.
type dwindow struct {
	job   *sjob
	until time.Time
}

// submitDebounced makes one debounced submission through client and
// checks what it returns against the model.
func (w *world) submitDebounced(client *ratchet.Client) error {
	u := w.uq
	key := u.rng.IntN(2)
	mode := u.rng.IntN(3) // 0 trailing, 1 trailing with the last arguments, 2 leading
	arg := u.rng.IntN(1000)
	var opts []ratchet.DebounceOption
	switch mode {
	case 1:
		opts = append(opts, ratchet.DebounceLastArgs())
	case 2:
		opts = append(opts, ratchet.DebounceLeading())
	}
	now := w.now().Truncate(time.Microsecond) // the client's clock, as it stamps a job
	h, open := u.debounced[key]
	joins := open && now.Before(h.until) && (mode == 2 || h.job.status == spi.StatusPending)
	payload := fmt.Appendf(nil, `{"d":%d}`, arg)
	id, err := client.SubmitRaw(w.ctx, "work", payload, ratchet.WithDebounce(fmt.Sprint("key-", key), debounceWindow, opts...))
	if err != nil {
		return w.storeErr("InsertJobs (a debounced submission)", err)
	}
	w.check(invDebounce)
	desc := fmt.Sprintf("key %d mode %d", key, mode)
	if joins {
		if id != h.job.id {
			w.fail(invDebounce, []*sjob{h.job}, nil, "a debounced submission (%s) in the window of %s (%s, until %s) returned id %s, not the holder's",
				desc, h.job.label, h.job.status, simtime.Offset(h.until.Sub(w.start)), id)
			return nil
		}
		if mode == 1 {
			g, err := w.store.GetJob(w.ctx, id)
			if err != nil {
				return w.storeErr("GetJob", err)
			}
			if !bytes.Equal(g.Payload, payload) {
				w.fail(invDebounce, []*sjob{h.job}, nil, "a debounced submission (%s) with the last arguments joined %s, whose payload is %s, not %s", desc, h.job.label, g.Payload, payload)
				return nil
			}
		}
		w.tracef([]*sjob{h.job}, nil, "client submit debounced %s: joins %s", desc, h.job.label)
		return nil
	}
	if id != u.next || w.byID[id] != nil {
		var was []*sjob
		what := "no window open"
		if open {
			was, what = []*sjob{h.job}, fmt.Sprintf("the window of %s (%s) until %s", h.job.label, h.job.status, simtime.Offset(h.until.Sub(w.start)))
		}
		w.fail(invDebounce, was, nil, "a debounced submission (%s) at %s, %s, returned id %s: no new job was written", desc, simtime.Offset(now.Sub(w.start)), what, id)
		return nil
	}
	due := now.Add(debounceWindow)
	if mode == 2 {
		due = now
	}
	j := w.addSubmitted(id, due)
	u.debounced[key] = dwindow{job: j, until: now.Add(debounceWindow)}
	w.tracef([]*sjob{j}, nil, "client submit debounced %s: %s(work) opens a window until %s", desc, j.label, simtime.Offset(now.Add(debounceWindow).Sub(w.start)))
	return nil
}
