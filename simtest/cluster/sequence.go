package cluster

import (
	"fmt"
	"math/rand/v2"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Sequenced submissions (ratchet.WithSequenceKey). Where the store keeps
// sequences (and the run, workflows), about one ordinary arrival in eight is one to three jobs of
// task "work" submitted through the SDK's client into one of three
// sequences, each holding on its predecessor's failure or (one in three)
// continuing, drawn from a stream of their own.
//
// The model links each job as the contract says (spi.Sequence): to the
// key's tail, walking back from a tail that a cancel took out of the
// sequence, when that job has not finished (or failed, for a job that
// holds); the link is a workflow edge, so workflow-release checks its
// release and the states it records, and flowFinished leaves a held link
// unrecorded. A cancel by hand of a waiting job hands its successor to
// its predecessor.
//
// The invariant, sequence: a submission's job is BLOCKED in the store
// exactly when the model links it, and a body of a job of a sequence
// starts only when every job submitted to the key before it has finished
// (but for one a DLQ retry ran again, which those after it may have
// passed when they continue on failure).
const invSequence = "sequence"

// sequenceKeys are the sequences of the workload.
var sequenceKeys = []string{"acct-0", "acct-1", "acct-2"}

// Fair-share submissions (ratchet.WithFairnessKey), one in three of the
// sequenced arrivals: one to four jobs of task "work" into one of two
// fairness keys. The model links each job as the contract says
// (spi.Sequence.Fair): to the key's last job (walking back over cancels)
// when that job is in the line (PENDING or BLOCKED); a claim that takes a
// job passes its turn (records TurnPassed on its successor's link, which
// is then released, due at the later of its due time and the claim's
// now), after the claim's jobs are chosen.
//
// The invariant, fair-share: a submission's job is BLOCKED in the store
// exactly when the model links it, and a key never has more than one job
// in the line that has not run yet (PENDING, never claimed).
const invFairShare = "fair-share"

// fairKeys are the fairness keys of the workload, kept in seqModel.jobs
// under fairPrefix + the key.
var fairKeys = []string{"tenant-0", "tenant-1"}

const fairPrefix = "fair:"

// seqModel is the sequence workload's state.
type seqModel struct {
	rng  *rand.Rand
	jobs map[string][]*sjob // each key's jobs, in submission order
	n    int                // submissions made, for their arguments
}

// sequenceTick draws whether this arrival is sequenced submissions.
func (w *world) sequenceTick() bool {
	if w.sc.NoUnique || !w.flowsOn() || spi.CapabilitiesOf(w.store).Sequences == nil {
		return false
	}
	if w.sq == nil {
		w.sq = &seqModel{rng: rand.New(rand.NewPCG(uint64(w.seed), 0x7365_7175_656e_6365)), jobs: map[string][]*sjob{}}
	}
	return w.sq.rng.IntN(8) == 0
}

// submitSequenced submits one to three jobs of one sequence through the
// SDK's client, one at a time, links them in the model, and checks each
// one's state in the store.
func (w *world) submitSequenced() error {
	if w.uq == nil {
		w.uq = &uniqueModel{holders: map[ukey]*sjob{}, debounced: map[int]dwindow{}}
	}
	client, err := w.uniqueClient()
	if err != nil {
		return err
	}
	q := w.sq
	if q.rng.IntN(3) == 0 {
		return w.submitFair(client)
	}
	key := sequenceKeys[q.rng.IntN(len(sequenceKeys))]
	k := 1 + q.rng.IntN(3)
	cont := q.rng.IntN(3) == 0
	opts := []ratchet.SequenceOption{}
	if cont {
		opts = append(opts, ratchet.SequenceContinueOnFailure())
	}
	for range k {
		now := w.now().Truncate(time.Microsecond)
		q.n++
		id, err := client.SubmitRaw(w.ctx, "work", fmt.Appendf(nil, `{"q":%d}`, q.n), ratchet.WithSequenceKey(key, opts...))
		if err != nil {
			return w.storeErr("InsertJobs (a sequenced submission)", err)
		}
		j := w.addSubmitted(id, now)
		j.seqKey = key
		tail := w.sequenceTail(key)
		q.jobs[key] = append(q.jobs[key], j)
		desc := fmt.Sprintf("client submit %s(work) into sequence %s", j.label, key)
		if cont {
			desc += " (continues on failure)"
		}
		if tail != nil && spi.SequenceLinks(tail.status, !cont) {
			j.deps = []*sedge{{parent: tail, allow: spi.SequenceAllow(!cont)}}
			tail.kids = append(tail.kids, j)
			w.setStatus(j, spi.StatusBlocked)
			desc += " after " + tail.label
		}
		w.tracef([]*sjob{j}, nil, "%s", desc)
		g, err := w.store.GetJob(w.ctx, id)
		if err != nil {
			return w.storeErr("GetJob (a sequenced job)", err)
		}
		w.check(invSequence)
		if (g.Status == spi.StatusBlocked) != (j.status == spi.StatusBlocked) {
			w.fail(invSequence, parentsOf(j), nil, "%s, submitted into sequence %s, is %s in the store; the jobs before it (%s) make it %s",
				j.label, key, g.Status, labels(q.jobs[key]), j.status)
			return nil
		}
	}
	return nil
}

// submitFair submits one to four jobs of one fairness key through client,
// one at a time, links them in the model, and checks each one's state in
// the store.
func (w *world) submitFair(client *ratchet.Client) error {
	q := w.sq
	key := fairKeys[q.rng.IntN(len(fairKeys))]
	for range 1 + q.rng.IntN(4) {
		now := w.now().Truncate(time.Microsecond)
		q.n++
		id, err := client.SubmitRaw(w.ctx, "work", fmt.Appendf(nil, `{"q":%d}`, q.n), ratchet.WithFairnessKey(key))
		if err != nil {
			return w.storeErr("InsertJobs (a fair-share submission)", err)
		}
		j := w.addSubmitted(id, now)
		j.fairKey = key
		tail := w.sequenceTail(fairPrefix + key)
		q.jobs[fairPrefix+key] = append(q.jobs[fairPrefix+key], j)
		desc := fmt.Sprintf("client submit %s(work) with fairness key %s", j.label, key)
		if tail != nil && (&spi.Sequence{Fair: true}).Links(tail.status) {
			j.deps = []*sedge{{parent: tail, allow: spi.TurnAllow}}
			tail.kids = append(tail.kids, j)
			w.setStatus(j, spi.StatusBlocked)
			desc += " behind " + tail.label
		}
		w.tracef([]*sjob{j}, nil, "%s", desc)
		g, err := w.store.GetJob(w.ctx, id)
		if err != nil {
			return w.storeErr("GetJob (a fair-share job)", err)
		}
		w.check(invFairShare)
		if (g.Status == spi.StatusBlocked) != (j.status == spi.StatusBlocked) {
			w.fail(invFairShare, parentsOf(j), nil, "%s, submitted with fairness key %s, is %s in the store; the key's jobs before it (%s) make it %s",
				j.label, key, g.Status, labels(q.jobs[fairPrefix+key]), j.status)
			return nil
		}
		w.checkFairLine(key)
	}
	return nil
}

// passTurns applies to the model the claim of the jobs of claimed at now:
// each one's successor of a fairness key is let go (spi.FairShareStore).
func (w *world) passTurns(claimed []*sjob, now time.Time) {
	for _, j := range claimed {
		if j.fairKey != "" {
			w.resolveEdges(j, spi.TurnPassed, now)
			w.checkFairLine(j.fairKey)
		}
	}
}

// checkFairLine checks that fairness key has at most one job in the line
// that has not run yet (PENDING and never claimed) in the model, which
// the submissions and the claims check against the store.
func (w *world) checkFairLine(key string) {
	w.check(invFairShare)
	var fresh []*sjob
	for _, j := range w.sq.jobs[fairPrefix+key] {
		if j.status == spi.StatusPending && j.seq == 0 {
			fresh = append(fresh, j)
		}
	}
	if len(fresh) > 1 {
		w.fail(invFairShare, fresh, nil, "fairness key %s has %d jobs in the line that have not run (%s); it holds one place", key, len(fresh), labels(fresh))
	}
}

// sequenceTail is the job the next job of sequence key waits on: its last
// job, or, for one cancelled while it waited, the job it waited on (and
// so on back); nil for none.
func (w *world) sequenceTail(key string) *sjob {
	js := w.sq.jobs[key]
	if len(js) == 0 {
		return nil
	}
	t := js[len(js)-1]
	for t.status == spi.StatusCancelled {
		before := t.waitedOn()
		if before == nil {
			break
		}
		t = before
	}
	return t
}

// waitedOn is the job j waits on through an unrecorded sequence link; nil
// for none.
func (j *sjob) waitedOn() *sjob {
	for _, e := range j.deps {
		if e.allow&spi.AllowSequence != 0 && e.recorded == "" {
			return e.parent
		}
	}
	return nil
}

// leaveSequence applies to the model a cancel by hand of j, which was
// BLOCKED: its successors' unrecorded sequence links move to the job j
// waited on, and are recorded at once when that job has finished (a
// held failure stays unrecorded).
func (w *world) leaveSequence(j *sjob, now time.Time) {
	before := j.waitedOn()
	if before == nil {
		return
	}
	var kept []*sjob
	for _, k := range j.kids {
		moved := false
		for _, e := range k.deps {
			if e.parent == j && e.recorded == "" && e.allow&spi.AllowSequence != 0 {
				e.parent, moved = before, true
			}
		}
		if !moved {
			kept = append(kept, k)
			continue
		}
		before.kids = append(before.kids, k)
		w.touch(k)
	}
	j.kids = kept
	if before.status.Terminal() {
		w.flowFinished(before, now)
	}
}

// checkSequenceStart checks that a body of j, a job of a sequence, starts
// on n only when every job submitted to its key before it has finished.
func (w *world) checkSequenceStart(n *node, j *sjob) bool {
	if j.seqKey == "" {
		return true
	}
	w.check(invSequence)
	for _, e := range w.sq.jobs[j.seqKey] {
		if e == j {
			return true
		}
		if !e.status.Terminal() && !e.retried {
			w.fail(invSequence, []*sjob{j, e}, []*node{n}, "%s starts on %s while %s, submitted to sequence %s before it, is %s",
				j.label, n.id, e.label, j.seqKey, e.status)
			return false
		}
	}
	return true
}

// held reports whether j waits on a failure in its sequence: BLOCKED on a
// link that holds on the failed job it names, or on a job itself held.
func (j *sjob) held() bool {
	for j.status == spi.StatusBlocked {
		var on *sedge
		for _, e := range j.deps {
			if e.allow&spi.AllowSequence != 0 && e.recorded == "" {
				on = e
			}
		}
		switch {
		case on == nil:
			return false
		case on.parent.status == spi.StatusFailed:
			return on.allow.Holds(spi.StatusFailed)
		}
		j = on.parent
	}
	return false
}

// releaseHeld is the operator of the heal phase: once every unfinished job
// waits on a failure in its sequence (which nothing but a retry or a
// cancel ends), it cancels the first such job, taking it out of its
// sequence, as CancelJob says.
func (w *world) releaseHeld() {
	if w.sq == nil || w.phase != phaseHeal || w.nonTerminal == 0 {
		return
	}
	var first *sjob
	held := 0
	for _, key := range sequenceKeys {
		for _, j := range w.sq.jobs[key] {
			if j.status.Terminal() {
				continue
			}
			if !j.held() {
				return
			}
			if held++; first == nil {
				first = j
			}
		}
	}
	if held != w.nonTerminal {
		return
	}
	now := w.now().Truncate(time.Microsecond)
	err := w.store.CancelJob(w.ctx, first.id, now)
	w.tracef([]*sjob{first}, nil, "operator cancel %s (held by a failure in sequence %s) -> %v", first.label, first.seqKey, err)
	w.checkAdmin("cancel", first, err, now)
}
