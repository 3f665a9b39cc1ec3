package mongodb

import (
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Field names of a job document. They follow the columns of ddl/.
const (
	fID          = "_id"
	fTask        = "task_name"
	fPayload     = "payload"
	fStatus      = "status"
	fPriority    = "priority"
	fScheduled   = "scheduled_time"
	fCreated     = "created_time"
	fAttempts    = "attempts"
	fMaxRetries  = "max_retries"
	fBackoff     = "backoff_kind"
	fBackoffUS   = "backoff_param_us"
	fClaimSeq    = "claim_seq"
	fCrash       = "crash_count"
	fSnoozes     = "snoozes"
	fOwner       = "owner_node"
	fClaimed     = "claimed_time"
	fFinished    = "finished_time"
	fLastError   = "last_error"
	fResult      = "job_result"
	fResultType  = "result_type"
	fIdem        = "idempotency_key"
	fParams      = "params"
	fParamList   = "pl" // the params as propEntry strings, when a key cannot be a field name
	fResource    = "resource_name"
	fResLimit    = "resource_limit"
	fTags        = "tags"
	fPropKeys    = "pk" // property keys, for the write-once check
	fPropEntries = "pv" // encoded key/value pairs, indexed for FindJobsByProperty
	fState       = "st" // per-namespace state: st.<encoded ns> = {j, v}
	fWorkflow    = "workflow_id"
	fDeps        = "deps"    // the job's dependencies, in insert order (depDoc)
	fDepStates   = "dps"     // dps.<parent hex> = the state the parent finished in
	fKids        = "kids"    // the ids of the jobs that depend on this one
	fStaged      = "stg"     // present while the insert of its workflow is not committed
	fRevived     = "revived" // when a DLQ retry last made the job wait again (µs)
	fSig         = "sig"     // the job's wait for a signal (sigDoc), absent when none
	fChunk       = "bc"      // a staged batch child's chunk token (see batch.go)
)

// Field paths inside the signal wait (sigDoc).
const (
	fSigName    = fSig + ".n"
	fSigOutcome = fSig + ".o"
	fSigPayload = fSig + ".p"
	fSigAt      = fSig + ".at"
	fSigWaitKey = fSig + ".wk"  // present while unresolved with a key: sigWaitKey
	fSigDue     = fSig + ".due" // present while unresolved with a deadline (µs)
)

// sigDoc is the stored form of a job's wait for a signal (spi.SignalWait).
// Name, key and deadline are as inserted; outcome, payload and resolution
// time are written by the resolution. WaitKey and Due are the indexed
// copies of the key (with the name) and of the deadline, present only while
// the wait is unresolved, so that the sparse indexes on them hold the
// unresolved waits only.
type sigDoc struct {
	Name     string       `bson:"n"`
	Key      string       `bson:"k,omitempty"`
	Deadline *int64       `bson:"dl,omitempty"`
	Outcome  string       `bson:"o,omitempty"`
	Payload  *bson.Binary `bson:"p,omitempty"`
	At       *int64       `bson:"at,omitempty"`
	WaitKey  string       `bson:"wk,omitempty"`
	Due      *int64       `bson:"due,omitempty"`
}

// sigWaitKey is the indexed form of an unresolved wait's key and name: the
// encoding of propEntry, unambiguous whatever either holds.
func sigWaitKey(key, name string) string { return propEntry(name, key) }

// encodeSignal is the stored form of the wait a job is inserted with, its
// outcome fields ignored, or nil.
func encodeSignal(w *spi.SignalWait) *sigDoc {
	if w == nil {
		return nil
	}
	d := &sigDoc{Name: w.Name, Key: w.Key, Deadline: optTimeUS(w.Deadline)}
	if w.Key != "" {
		d.WaitKey = sigWaitKey(w.Key, w.Name)
	}
	d.Due = d.Deadline
	return d
}

// decodeSignal is the inverse of encodeSignal, with the outcome.
func decodeSignal(d *sigDoc) (*spi.SignalWait, error) {
	if d == nil {
		return nil, nil
	}
	w := &spi.SignalWait{Name: d.Name, Key: d.Key, Outcome: spi.SignalOutcome(d.Outcome), Payload: bytesOf(d.Payload)}
	switch w.Outcome {
	case "", spi.SignalDelivered, spi.SignalTimedOut, spi.SignalCancelled:
	default:
		return nil, fmt.Errorf("unknown signal outcome %q", d.Outcome)
	}
	if d.Deadline != nil {
		w.Deadline = usTime(*d.Deadline)
	}
	if d.At != nil {
		w.ResolvedAt = usTime(*d.At)
	}
	return w, nil
}

// depDoc is the stored form of one dependency (spi.Dependency without the
// parent's state, which lives in dps, keyed by depKey).
type depDoc struct {
	Parent        bson.Binary  `bson:"p"`
	Allow         int32        `bson:"a,omitempty"`
	Condition     string       `bson:"c,omitempty"`
	ConditionArgs *bson.Binary `bson:"ca,omitempty"`
}

// depKey names a parent inside dps: its id in hex (field names cannot be
// binaries).
func depKey(parent uuid.UUID) string { return hex.EncodeToString(parent[:]) }

// depPath is the field path of a parent's recorded state.
func depPath(parent uuid.UUID) string { return fDepStates + "." + depKey(parent) }

// jobDoc is the stored form of a job, without its properties and state.
// Times are int64 microseconds since the Unix epoch (see timeUS); the
// optional fields are absent rather than empty, except payload and result,
// which are null for nil so that an empty binary stays apart from none
// (omitempty would drop an empty bson.Binary too).
type jobDoc struct {
	ID            bson.Binary       `bson:"_id"`
	TaskName      string            `bson:"task_name"`
	Payload       *bson.Binary      `bson:"payload"`
	Status        string            `bson:"status"`
	Priority      int32             `bson:"priority"`
	Scheduled     int64             `bson:"scheduled_time"`
	Created       int64             `bson:"created_time"`
	Attempts      int64             `bson:"attempts"`
	MaxRetries    int64             `bson:"max_retries"`
	Backoff       string            `bson:"backoff_kind,omitempty"`
	BackoffUS     int64             `bson:"backoff_param_us"`
	ClaimSeq      int64             `bson:"claim_seq"`
	Crash         int64             `bson:"crash_count"`
	Snoozes       int64             `bson:"snoozes,omitempty"`
	Owner         string            `bson:"owner_node,omitempty"`
	Claimed       *int64            `bson:"claimed_time,omitempty"`
	Finished      *int64            `bson:"finished_time,omitempty"`
	LastError     string            `bson:"last_error,omitempty"`
	Result        *bson.Binary      `bson:"job_result"`
	ResultType    string            `bson:"result_type,omitempty"`
	Idempotency   string            `bson:"idempotency_key,omitempty"`
	Params        map[string]string `bson:"params,omitempty"`
	ParamList     []string          `bson:"pl,omitempty"` // instead of params when a key cannot be a field name
	Resource      string            `bson:"resource_name,omitempty"`
	ResourceLimit int64             `bson:"resource_limit,omitempty"`
	Tags          []string          `bson:"tags,omitempty"`
	// The submitter's trace context (spi.Job.TraceContext), absent for
	// none.
	Trace *bson.Binary `bson:"trace_context,omitempty"`
	// The properties written with the job (write-once); job reads leave
	// them out (jobProjection).
	PropKeys    []string `bson:"pk,omitempty"`
	PropEntries []string `bson:"pv,omitempty"`
	// Workflows (see workflow.go): the workflow id, the dependencies, the
	// states the finished parents ended in, and the dependents.
	Workflow  *bson.Binary      `bson:"workflow_id,omitempty"`
	Deps      []depDoc          `bson:"deps,omitempty"`
	DepStates map[string]string `bson:"dps,omitempty"`
	Kids      []bson.Binary     `bson:"kids,omitempty"`
	Staged    *int64            `bson:"stg,omitempty"`
	// Batches (see batch.go): the token of a staged child's chunk.
	Chunk *bson.Binary `bson:"bc,omitempty"`
	// Signals (see signal.go): the wait for a signal, if any.
	Signal *sigDoc `bson:"sig,omitempty"`
}

// jobProjection leaves the properties and the state out of job reads.
var jobProjection = bson.D{{Key: fPropKeys, Value: 0}, {Key: fPropEntries, Value: 0}, {Key: fState, Value: 0}}

// idValue is the stored form of a job id: a BSON binary of subtype 4
// (UUID), whose order (length, subtype, then bytes) is the byte order of
// the UUIDs.
func idValue(id uuid.UUID) bson.Binary {
	return bson.Binary{Subtype: bson.TypeBinaryUUID, Data: append([]byte(nil), id[:]...)}
}

// idValues converts ids to their stored form.
func idValues(ids []uuid.UUID) bson.A {
	out := make(bson.A, len(ids))
	for i, id := range ids {
		out[i] = idValue(id)
	}
	return out
}

// binaryID decodes a stored job id.
func binaryID(b bson.Binary) (uuid.UUID, error) {
	if len(b.Data) != 16 || (b.Subtype != bson.TypeBinaryUUID && b.Subtype != bson.TypeBinaryUUIDOld) {
		return uuid.Nil, fmt.Errorf("_id is binary subtype %d of %d bytes, not a UUID", b.Subtype, len(b.Data))
	}
	return uuid.UUID(b.Data), nil
}

// zeroUS is the stored form of the zero time.Time.
var zeroUS = time.Time{}.UnixMicro()

// timeUS is the stored form of a time: microseconds since the Unix epoch.
// BSON dates have millisecond precision only, and the contract requires
// microseconds. The zero time.Time maps to its own value, and back.
func timeUS(t time.Time) int64 { return t.UnixMicro() }

// usTime is the inverse of timeUS, in UTC.
func usTime(us int64) time.Time {
	if us == zeroUS {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// optTimeUS stores the zero time as an absent field.
func optTimeUS(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	us := timeUS(t)
	return &us
}

// binaryOf stores nil as an absent field and keeps an empty slice apart.
func binaryOf(b []byte) *bson.Binary {
	if b == nil {
		return nil
	}
	return &bson.Binary{Subtype: bson.TypeBinaryGeneric, Data: append([]byte{}, b...)}
}

// bytesOf is the inverse of binaryOf.
func bytesOf(b *bson.Binary) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b.Data...)
}

// encodeJob converts a job as the client submits it to its document, with
// status PENDING (WAITING for a job that waits for a signal, BLOCKED for
// one with dependencies) and the claim fields of a new job.
func encodeJob(j *spi.Job) *jobDoc {
	d := &jobDoc{
		ID:          idValue(j.ID),
		TaskName:    j.TaskName,
		Payload:     binaryOf(j.Payload),
		Status:      string(spi.StatusPending),
		Priority:    int32(j.Priority),
		Scheduled:   timeUS(j.ScheduledAt),
		Created:     timeUS(j.CreatedAt),
		Attempts:    int64(j.Attempts),
		MaxRetries:  int64(j.MaxRetries),
		Backoff:     string(j.Backoff),
		BackoffUS:   j.BackoffParam.Microseconds(),
		ClaimSeq:    j.ClaimSeq,
		Crash:       int64(j.CrashCount),
		Snoozes:     int64(j.Snoozes),
		Owner:       j.OwnerNode,
		Claimed:     optTimeUS(j.ClaimedAt),
		Finished:    optTimeUS(j.FinishedAt),
		LastError:   j.LastError,
		Result:      binaryOf(j.Result),
		ResultType:  j.ResultType,
		Idempotency: j.IdempotencyKey,
		Resource:    j.Resource,
		Tags:        dedupe(j.Tags),
	}
	if j.Resource != "" {
		d.ResourceLimit = int64(j.ResourceLimit)
	}
	if j.WorkflowID != uuid.Nil {
		w := idValue(j.WorkflowID)
		d.Workflow = &w
	}
	if len(j.TraceContext) > 0 {
		d.Trace = binaryOf(j.TraceContext)
	}
	for _, dep := range j.Dependencies {
		dd := depDoc{Parent: idValue(dep.ParentID), Allow: int32(dep.Allow), Condition: dep.Condition}
		if dep.ConditionArgs != nil {
			dd.ConditionArgs = binaryOf(dep.ConditionArgs)
		}
		d.Deps = append(d.Deps, dd)
	}
	if len(d.Deps) > 0 {
		d.Status = string(spi.StatusBlocked)
	}
	if j.Signal != nil {
		d.Signal = encodeSignal(j.Signal)
		d.Status = string(spi.StatusWaiting)
	}
	switch {
	case len(j.Params) == 0:
	case slices.ContainsFunc(slices.Collect(maps.Keys(j.Params)), fieldless):
		for _, k := range slices.Sorted(maps.Keys(j.Params)) {
			d.ParamList = append(d.ParamList, propEntry(k, j.Params[k]))
		}
	default:
		d.Params = make(map[string]string, len(j.Params))
		for k, v := range j.Params {
			d.Params[k] = v
		}
	}
	if len(j.Properties) > 0 {
		for _, k := range slices.Sorted(maps.Keys(j.Properties)) {
			d.PropKeys = append(d.PropKeys, k)
			d.PropEntries = append(d.PropEntries, propEntry(k, j.Properties[k]))
		}
	}
	return d
}

// fieldless reports whether a param key cannot be a field name of the
// params sub-document: empty, with a dot (a path; FerretDB refuses it, as
// it does a leading dollar), a leading dollar, or a NUL byte. The params
// of a job with such a key are stored as the list pl of propEntry strings
// instead (spi.BatchParam, "ratchet.batch", is one).
func fieldless(k string) bool {
	return k == "" || strings.ContainsAny(k, ".\x00") || strings.HasPrefix(k, "$")
}

// dedupe returns tags without repeats, in their first order, or nil.
func dedupe(tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	out := make([]string, 0, len(tags))
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// decodeJob reads one job document, or returns an error wrapping
// spi.ErrCorruptJob that names the job (when its id is readable) and the
// problem.
func decodeJob(raw bson.Raw) (*spi.Job, error) {
	idStr := "(unknown id)"
	if v, err := raw.LookupErr(fID); err == nil {
		if sub, data, ok := v.BinaryOK(); ok {
			if id, err := binaryID(bson.Binary{Subtype: sub, Data: data}); err == nil {
				idStr = id.String()
			}
		}
	}
	var d jobDoc
	if err := bson.Unmarshal(raw, &d); err != nil {
		return nil, corrupt(idStr, "undecodable document: %v", err)
	}
	id, err := binaryID(d.ID)
	if err != nil {
		return nil, corrupt(idStr, "%v", err)
	}
	st := spi.Status(d.Status)
	if !st.Valid() {
		return nil, corrupt(idStr, "unknown status %q", d.Status)
	}
	p := spi.Priority(d.Priority)
	if !p.Valid() {
		return nil, corrupt(idStr, "priority %d out of range 0..4", d.Priority)
	}
	j := &spi.Job{
		ID:             id,
		TaskName:       d.TaskName,
		Payload:        bytesOf(d.Payload),
		Status:         st,
		Priority:       p,
		ScheduledAt:    usTime(d.Scheduled),
		CreatedAt:      usTime(d.Created),
		Attempts:       int(d.Attempts),
		MaxRetries:     int(d.MaxRetries),
		Backoff:        spi.BackoffKind(d.Backoff),
		BackoffParam:   time.Duration(d.BackoffUS) * time.Microsecond,
		CrashCount:     int(d.Crash),
		Snoozes:        int(d.Snoozes),
		ClaimSeq:       d.ClaimSeq,
		OwnerNode:      d.Owner,
		LastError:      d.LastError,
		Result:         bytesOf(d.Result),
		ResultType:     d.ResultType,
		IdempotencyKey: d.Idempotency,
		Tags:           d.Tags,
		Params:         d.Params,
		Resource:       d.Resource,
		ResourceLimit:  int(d.ResourceLimit),
	}
	if d.Claimed != nil {
		j.ClaimedAt = usTime(*d.Claimed)
	}
	if d.Finished != nil {
		j.FinishedAt = usTime(*d.Finished)
	}
	if d.Trace != nil && len(d.Trace.Data) > 0 {
		j.TraceContext = d.Trace.Data
	}
	if d.Workflow != nil {
		if j.WorkflowID, err = binaryID(*d.Workflow); err != nil {
			return nil, corrupt(idStr, "workflow_id: %v", err)
		}
	}
	if len(d.ParamList) > 0 {
		j.Params = make(map[string]string, len(d.ParamList))
		for _, e := range d.ParamList {
			k, v, ok := parsePropEntry(e)
			if !ok {
				return nil, corrupt(idStr, "pl: unreadable entry %q", e)
			}
			j.Params[k] = v
		}
	}
	if j.Signal, err = decodeSignal(d.Signal); err != nil {
		return nil, corrupt(idStr, "sig: %v", err)
	}
	j.DependencyCount, j.Dependents = len(d.Deps), len(d.Kids)
	for _, dep := range d.Deps {
		p, err := binaryID(dep.Parent)
		if err != nil {
			return nil, corrupt(idStr, "dependency: %v", err)
		}
		if _, ok := d.DepStates[depKey(p)]; !ok {
			j.Waiting++
		}
	}
	return j, nil
}

func corrupt(id, format string, args ...any) error {
	return fmt.Errorf("%w: job %s: %s", spi.ErrCorruptJob, id, fmt.Sprintf(format, args...))
}

// stateKey is the field name of a state namespace inside the st
// sub-document: namespaces may hold dots and dollars, which field paths
// cannot, so they are hex-encoded behind an "n".
func stateKey(ns string) string { return "n" + hex.EncodeToString([]byte(ns)) }

// propEntry encodes one property as an element of the pv array: the key's
// length, a colon, the key, then the value. The encoding is unambiguous
// whatever the key holds, and equality of entries is equality of key and
// value, which the multikey index on pv serves.
func propEntry(key, value string) string {
	return strconv.Itoa(len(key)) + ":" + key + value
}

// parsePropEntry is the inverse of propEntry.
func parsePropEntry(e string) (key, value string, ok bool) {
	n, rest, found := strings.Cut(e, ":")
	if !found {
		return "", "", false
	}
	l, err := strconv.Atoi(n)
	if err != nil || l < 0 || l > len(rest) {
		return "", "", false
	}
	return rest[:l], rest[l:], true
}

// permitKey names one claim's hold on a resource permit inside the
// resource's counter document: the job id in hex, a dash, and the claim
// sequence of the claim that holds it.
func permitKey(id uuid.UUID, claimSeq int64) string {
	return hex.EncodeToString(id[:]) + "-" + strconv.FormatInt(claimSeq, 10)
}

// parsePermitKey is the inverse of permitKey.
func parsePermitKey(k string) (uuid.UUID, int64, bool) {
	h, seq, found := strings.Cut(k, "-")
	if !found {
		return uuid.Nil, 0, false
	}
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != 16 {
		return uuid.Nil, 0, false
	}
	n, err := strconv.ParseInt(seq, 10, 64)
	if err != nil {
		return uuid.Nil, 0, false
	}
	return uuid.UUID(b), n, true
}

// fieldOf is the document field of each field a transition writes.
var fieldOf = [...]string{
	spi.FieldStatus: fStatus, spi.FieldScheduledAt: fScheduled, spi.FieldFinishedAt: fFinished,
	spi.FieldClaimedAt: fClaimed, spi.FieldOwner: fOwner, spi.FieldAttempts: fAttempts,
	spi.FieldCrashCount: fCrash, spi.FieldLastError: fLastError, spi.FieldResult: fResult,
	spi.FieldResultType: fResultType, spi.FieldClaimSeq: fClaimSeq, spi.FieldSnoozes: fSnoozes,
}

// updateOf is the update that applies transition ch to a job's document,
// setting the fields of set and removing those of unset besides (either
// may be nil). The filter, with the change's From, is the caller's.
func updateOf(ch spi.Change, set, unset bson.M) bson.M {
	inc := bson.M{}
	if set == nil {
		set = bson.M{}
	}
	if unset == nil {
		unset = bson.M{}
	}
	for _, w := range ch.Writes {
		f := fieldOf[w.Field]
		switch {
		case w.Op == spi.OpIncrement:
			inc[f] = int64(1)
		case w.Op == spi.OpClear:
			unset[f] = ""
		default:
			switch w.Field {
			case spi.FieldScheduledAt, spi.FieldFinishedAt, spi.FieldClaimedAt:
				set[f] = timeUS(w.Time)
			case spi.FieldAttempts, spi.FieldCrashCount, spi.FieldSnoozes:
				set[f] = int64(w.Int)
			case spi.FieldResult:
				set[f] = binaryOf(w.Bytes)
			default: // the status, the owner, the last error, the result type
				set[f] = w.Text
			}
		}
	}
	u := bson.M{}
	for op, m := range map[string]bson.M{"$set": set, "$unset": unset, "$inc": inc} {
		if len(m) > 0 {
			u[op] = m
		}
	}
	return u
}
