package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// envelope is a test codec: it XORs the bytes with key and prefixes them
// with its tag and, as an encrypting codec binds a value by its
// additional data, the value's place (the stored surface and the job, or
// the scope); it refuses bytes without the tag, and a value read in
// another place. It records the surfaces it saw.
type envelope struct {
	tag      string
	key      byte
	mu       sync.Mutex
	surfaces []string
}

// place is what a value of ref is bound to: its job, or its scope.
func place(ref ratchet.PayloadRef) string {
	if ref.JobID == uuid.Nil {
		return string(ref.Surface.Stored()) + "|scope:" + ref.Scope + "|"
	}
	return string(ref.Surface.Stored()) + "|" + ref.JobID.String() + "|"
}

func (c *envelope) Encode(_ context.Context, ref ratchet.PayloadRef, b []byte) ([]byte, error) {
	c.mu.Lock()
	c.surfaces = append(c.surfaces, "encode "+string(ref.Surface))
	c.mu.Unlock()
	out := []byte(c.tag + place(ref))
	for _, x := range b {
		out = append(out, x^c.key)
	}
	return out, nil
}

func (c *envelope) Decode(_ context.Context, ref ratchet.PayloadRef, b []byte) ([]byte, error) {
	c.mu.Lock()
	c.surfaces = append(c.surfaces, "decode "+string(ref.Surface))
	c.mu.Unlock()
	rest, ok := bytes.CutPrefix(b, []byte(c.tag))
	if !ok {
		return nil, errors.New("not an envelope of " + c.tag)
	}
	want := place(ref)
	if bytes.HasPrefix(rest, []byte(string(ref.Surface.Stored())+"|scope:")) {
		want = place(ratchet.PayloadRef{Surface: ref.Surface, Scope: ref.Scope})
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(want)); !ok {
		return nil, fmt.Errorf("a value of another place read as %q", want)
	}
	out := make([]byte, len(rest))
	for i, x := range rest {
		out[i] = x ^ c.key
	}
	return out, nil
}

// TestPayloadPipeline checks the one path of payload bytes: arguments are
// stored through the codecs (outer codec last) and decoded before the body
// runs, results are stored through them and decoded by Task.Result, and
// the limit is measured before the codecs.
func TestPayloadPipeline(t *testing.T) {
	inner, outer := &envelope{tag: "A:", key: 7}, &envelope{tag: "B:", key: 9}
	double := ratchet.NewTask("double", func(_ context.Context, n int) (int, error) { return 2 * n, nil })
	r := start(t, engine.Options{Client: ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{inner, outer}, MaxPayloadBytes: 10}}, double)
	id, err := double.Submit(context.Background(), r.client, 21)
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	j := r.job(id)
	assert.True(t, bytes.HasPrefix(j.Payload, []byte("B:")), "the outer codec ran last: %q", j.Payload)
	assert.True(t, bytes.HasPrefix(j.Result, []byte("B:")), "the result went through the codecs: %q", j.Result)
	got, err := double.Result(r.client, j)
	require.NoError(t, err)
	assert.Equal(t, 42, got)
	assert.Equal(t, []string{"encode task", "decode task", "encode result", "decode result"}, inner.surfaces)

	// Ten bytes serialized pass although the codecs make them 14 bytes;
	// eleven do not.
	_, err = r.client.SubmitRaw(context.Background(), "double", []byte(`1234567890`))
	require.NoError(t, err)
	_, err = r.client.SubmitRaw(context.Background(), "double", []byte(`12345678901`))
	var tooLarge *ratchet.PayloadTooLargeError
	require.ErrorAs(t, err, &tooLarge)
	assert.Equal(t, 11, tooLarge.Size)
}

// TestUndecodablePayloadDeadLetters checks that a payload the codecs cannot
// decode (written under another codec: a wrong key) fails its job at once
// with an error that names the problem, and runs no body.
func TestUndecodablePayloadDeadLetters(t *testing.T) {
	var ran bool
	task := ratchet.NewVoidTask("t", func(context.Context, int) error { ran = true; return nil })
	r := start(t, engine.Options{Client: ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{&envelope{tag: "new:", key: 1}}}}, task)
	other, err := ratchet.NewClient(r.store, ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{&envelope{tag: "old:", key: 2}}})
	require.NoError(t, err)
	id, err := task.Submit(context.Background(), other, 1)
	require.NoError(t, err)
	r.eng.NotifyNewWork(spi.PriorityNormal)
	ev := r.next(id)
	assert.Equal(t, engine.EventFailed, ev.Kind)
	assert.Contains(t, ev.Error, "not an envelope of new:")
	assert.False(t, ran)
}

// TestWorkMiddlewareOrder checks that work middleware wraps bodies, the
// first outermost, sees the JobContext, and that the error it returns is
// the one decided on.
func TestWorkMiddlewareOrder(t *testing.T) {
	var mu sync.Mutex
	var trace []string
	rec := func(name string) ratchet.WorkMiddleware {
		return func(ctx context.Context, j *ratchet.Job, next ratchet.WorkFunc) (any, error) {
			jc, ok := ratchet.JobFromContext(ctx)
			mu.Lock()
			trace = append(trace, name+" in "+j.TaskName)
			mu.Unlock()
			assert.True(t, ok && jc.ID == j.ID, "the JobContext is in ctx")
			res, err := next(ctx, j)
			mu.Lock()
			trace = append(trace, name+" out")
			mu.Unlock()
			return res, err
		}
	}
	refuse := func(ctx context.Context, j *ratchet.Job, next ratchet.WorkFunc) (any, error) {
		return nil, ratchet.DoNotRetry(errors.New("breaker open"))
	}
	task := ratchet.NewVoidTask("t", func(context.Context, int) error {
		mu.Lock()
		trace = append(trace, "body")
		mu.Unlock()
		return nil
	})
	r := start(t, engine.Options{WorkMiddleware: []ratchet.WorkMiddleware{rec("outer"), rec("inner")}}, task)
	id, err := task.Submit(context.Background(), r.client, 1)
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	mu.Lock()
	assert.Equal(t, []string{"outer in t", "inner in t", "body", "inner out", "outer out"}, trace)
	mu.Unlock()

	r2 := start(t, engine.Options{WorkMiddleware: []ratchet.WorkMiddleware{refuse}}, task)
	id, err = task.Submit(context.Background(), r2.client, 1)
	require.NoError(t, err)
	ev := r2.next(id)
	assert.Equal(t, engine.EventFailed, ev.Kind)
	assert.Contains(t, ev.Error, "breaker open")
}

// dropResults stores no result of task "quiet" and the default for others.
type dropResults struct{}

func (dropResults) SerializeResult(ctx context.Context, id uuid.UUID, v any) (ratchet.SerializedResult, error) {
	if s, ok := v.(string); ok && strings.HasPrefix(s, "quiet") {
		return ratchet.SerializedResult{}, nil
	}
	return ratchet.SerializerResults{}.SerializeResult(ctx, id, v)
}

// TestResultStrategy checks that the result strategy decides what is
// stored of a result.
func TestResultStrategy(t *testing.T) {
	task := ratchet.NewTask("echo", func(_ context.Context, s string) (string, error) { return s, nil })
	r := start(t, engine.Options{ResultStrategy: dropResults{}}, task)
	quiet, err := task.Submit(context.Background(), r.client, "quiet please")
	require.NoError(t, err)
	loud, err := task.Submit(context.Background(), r.client, "loud")
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, r.next(quiet).Kind)
	require.Equal(t, engine.EventSucceeded, r.next(loud).Kind)
	assert.Empty(t, r.job(quiet).Result)
	assert.JSONEq(t, `"loud"`, string(r.job(loud).Result))
}

// TestRawSubmission checks that a raw submission takes the path of a typed
// one (insert middleware, options, wakeup) and that bad input fails before
// anything is written.
func TestRawSubmission(t *testing.T) {
	var seen []string
	mw := func(ctx context.Context, jobs []*ratchet.Job, next ratchet.InsertFunc) ([]spi.InsertResult, error) {
		for _, j := range jobs {
			seen = append(seen, j.TaskName)
		}
		return next(ctx, jobs)
	}
	type order struct {
		ID int `json:"id"`
	}
	got := make(chan order, 1)
	task := ratchet.NewVoidTask("order.ship", func(_ context.Context, o order) error { got <- o; return nil })
	r := start(t, engine.Options{Client: ratchet.ClientOptions{InsertMiddleware: []ratchet.InsertMiddleware{mw}}}, task)
	ctx := context.Background()
	id, err := r.client.SubmitRaw(ctx, "order.ship", json.RawMessage(`{"id": 7}`), ratchet.WithTags("eu"))
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	assert.Equal(t, order{ID: 7}, <-got)
	assert.Equal(t, []string{"eu"}, r.job(id).Tags)
	assert.Equal(t, []string{"order.ship"}, seen, "the insert middleware saw the raw submission")

	_, err = r.client.SubmitRaw(ctx, "", []byte(`{}`))
	require.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	_, err = r.client.SubmitRaw(ctx, "order.ship", []byte(`{"id":`))
	require.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	restricted, err := ratchet.NewClient(r.store, ratchet.ClientOptions{Tasks: []string{"order.ship"}})
	require.NoError(t, err)
	_, err = restricted.SubmitRaw(ctx, "order.shipp", []byte(`{}`))
	var unknown *ratchet.UnknownTaskError
	require.ErrorAs(t, err, &unknown)
	assert.Equal(t, "order.shipp", unknown.Name)
	page, err := r.client.ListJobs(ctx, ratchet.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, page.Jobs, 1, "nothing written by the refused submissions")
}

// TestListJobsFilters checks the client's listing filters over a store:
// task, creation range, property, and the errors of bad filters.
func TestListJobsFilters(t *testing.T) {
	ctx := context.Background()
	a := ratchet.NewVoidTask("a", func(context.Context, int) error { return nil })
	b := ratchet.NewVoidTask("b", func(context.Context, int) error { return nil })
	r := start(t, engine.Options{}, a, b)
	ida, err := a.Submit(ctx, r.client, 1, ratchet.WithDelay(time.Hour))
	require.NoError(t, err)
	r.clock.Advance(time.Minute)
	idb, err := b.Submit(ctx, r.client, 1, ratchet.WithDelay(time.Hour))
	require.NoError(t, err)
	require.NoError(t, r.store.PutProperty(ctx, idb, "order", "A-1"))
	list := func(o ratchet.ListOptions) []uuid.UUID {
		page, err := r.client.ListJobs(ctx, o)
		require.NoError(t, err)
		var out []uuid.UUID
		for _, j := range page.Jobs {
			out = append(out, j.ID)
		}
		return out
	}
	assert.Equal(t, []uuid.UUID{ida}, list(ratchet.ListOptions{Task: "a"}))
	assert.Equal(t, []uuid.UUID{idb}, list(ratchet.ListOptions{CreatedFrom: t0.Add(time.Minute)}))
	assert.Equal(t, []uuid.UUID{ida}, list(ratchet.ListOptions{CreatedBefore: t0.Add(time.Minute)}))
	assert.Equal(t, []uuid.UUID{idb}, list(ratchet.ListOptions{PropertyKey: "order", PropertyValue: "A-1"}))
	_, err = r.client.ListJobs(ctx, ratchet.ListOptions{CreatedFrom: t0, CreatedBefore: t0})
	require.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	bare, err := ratchet.NewClient(noLeases{r.store}, ratchet.ClientOptions{})
	require.NoError(t, err)
	_, err = bare.ListJobs(ctx, ratchet.ListOptions{PropertyKey: "order"})
	require.ErrorIs(t, err, ratchet.ErrUnsupported)
}

// TestCountJobs checks the client's capped count.
func TestCountJobs(t *testing.T) {
	ctx := context.Background()
	a := ratchet.NewVoidTask("a", func(context.Context, int) error { return nil })
	r := start(t, engine.Options{}, a)
	_, err := a.SubmitMany(ctx, r.client, []int{1, 2, 3, 4, 5}, ratchet.WithDelay(time.Hour))
	require.NoError(t, err)
	n, capped, err := r.client.CountJobs(ctx, ratchet.ListOptions{Task: "a"}, 0)
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	assert.False(t, capped)
	n, capped, err = r.client.CountJobs(ctx, ratchet.ListOptions{Status: ratchet.StatusPending}, 3)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.True(t, capped, "more than 3")
	n, capped, err = r.client.CountJobs(ctx, ratchet.ListOptions{}, 5)
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	assert.False(t, capped, "exactly the cap is not capped")
	bare, err := ratchet.NewClient(noLeases{r.store}, ratchet.ClientOptions{})
	require.NoError(t, err)
	_, _, err = bare.CountJobs(ctx, ratchet.ListOptions{}, 0)
	require.ErrorIs(t, err, ratchet.ErrUnsupported)
}
