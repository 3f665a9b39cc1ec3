package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

type signup struct {
	Email    string            `json:"email"`
	Password string            `json:"password"`
	Card     map[string]string `json:"card"`
	IBAN     string            `json:"iban"`
	Notes    []map[string]any  `json:"notes"`
}

// JobDetail decodes a job's arguments and result through the pipeline
// (here a binding codec) and, with masking on, masks the sensitive fields
// at any depth, the built-in names and those the job's property names;
// the body still receives the real values.
func TestJobDetailMasksSensitiveFields(t *testing.T) {
	ctx := context.Background()
	got := make(chan signup, 1)
	task := ratchet.NewTask("signup", func(_ context.Context, s signup) (map[string]string, error) {
		got <- s
		return map[string]string{"session_token": "tok-123", "user": "u1"}, nil
	})
	codec := &envelope{tag: "M:", key: 4}
	r := start(t, engine.Options{Client: ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{codec}, MaskPayloads: true}}, task)
	in := signup{Email: "ann@example.com", Password: "hunter2", Card: map[string]string{"card_number": "4111", "cvv": "123", "brand": "visa"},
		IBAN: "DE89", Notes: []map[string]any{{"api-key": "k", "text": "hi"}}}
	id, err := task.Submit(ctx, r.client, in, ratchet.WithProperty(ratchet.MaskFieldsProperty, "iban, email"),
		ratchet.WithParam("tenant", "acme"), ratchet.WithParam("api_key", "k-123"), ratchet.WithParam("iban", "DE89"))
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	assert.Equal(t, in, <-got, "the body receives the real values")

	d, err := r.client.JobDetail(ctx, id)
	require.NoError(t, err)
	assert.True(t, d.Masked)
	assert.JSONEq(t, `{"email":"***","password":"***","card":{"card_number":"***","cvv":"***","brand":"visa"},"iban":"***",
		"notes":[{"api-key":"***","text":"hi"}]}`, string(d.Arguments))
	assert.JSONEq(t, `{"session_token":"***","user":"u1"}`, string(d.Result))
	assert.Equal(t, map[string]string{"tenant": "acme", "api_key": "***", "iban": "***"}, d.Job.Params,
		"params follow the policy too: a built-in name and one the job's property names")
	assert.Nil(t, d.Job.Payload, "no stored bytes in a detail")
	assert.Equal(t, ratchet.StatusSucceeded, d.Job.Status)

	plain, err := ratchet.NewClient(r.store, ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{codec}})
	require.NoError(t, err)
	d, err = plain.JobDetail(ctx, id)
	require.NoError(t, err)
	assert.False(t, d.Masked)
	assert.Contains(t, string(d.Arguments), "hunter2", "masking off: the detail is the decoded arguments")

	// A listing's page masks its params as the detail does (the job's
	// property included); masking off changes nothing.
	page, err := r.client.ListJobs(ctx, ratchet.ListOptions{})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	require.NoError(t, r.client.MaskJobs(ctx, page.Jobs))
	assert.Equal(t, map[string]string{"tenant": "acme", "api_key": "***", "iban": "***"}, page.Jobs[0].Params)
	page, err = plain.ListJobs(ctx, ratchet.ListOptions{})
	require.NoError(t, err)
	require.NoError(t, plain.MaskJobs(ctx, page.Jobs))
	assert.Equal(t, "k-123", page.Jobs[0].Params["api_key"])

	wrong, err := ratchet.NewClient(r.store, ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{&envelope{tag: "X:", key: 1}}, MaskPayloads: true})
	require.NoError(t, err)
	_, err = wrong.JobDetail(ctx, id)
	assert.ErrorContains(t, err, "not an envelope of X:", "a value that does not decode is an error, never shown raw")
}

func TestMaskJSON(t *testing.T) {
	p := ratchet.DefaultMaskingPolicy{Extra: []string{"dob"}}
	mc := ratchet.MaskingContext{}
	assert.JSONEq(t, `{"DOB":"***","Access-Token":"***","n":1.50}`,
		string(ratchet.MaskJSON([]byte(`{"DOB":"1990-01-01","Access-Token":"x","n":1.50}`), mc, p)), "names without case, - and _; numbers kept as written")
	assert.Equal(t, `"***"`, string(ratchet.MaskJSON([]byte("not json"), mc, p)), "what cannot be parsed is masked whole")
	assert.Equal(t, `[1,2]`, string(ratchet.MaskJSON([]byte(`[1,2]`), mc, p)))
	assert.False(t, p.IsSensitiveField("brand", mc))
	assert.True(t, p.IsSensitiveField("iban", ratchet.MaskingContext{Properties: map[string]string{ratchet.MaskFieldsProperty: "x,IBAN"}}))
}

// The submitter's trace context follows the masking policy too: a detail
// leaves it out when the policy finds the field TraceContextField
// sensitive, and keeps it otherwise.
func TestJobDetailMasksTheTraceContextByPolicy(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	stamp := func(ctx context.Context, jobs []*ratchet.Job, next ratchet.InsertFunc) ([]spi.InsertResult, error) {
		for _, j := range jobs {
			j.TraceContext = []byte("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		}
		return next(ctx, jobs)
	}
	submitter, err := ratchet.NewClient(store, ratchet.ClientOptions{InsertMiddleware: []ratchet.InsertMiddleware{stamp}})
	require.NoError(t, err)
	id, err := submitter.SubmitRaw(ctx, "traced", []byte(`{}`))
	require.NoError(t, err)

	for _, c := range []struct {
		policy ratchet.MaskingPolicy
		kept   bool
	}{{ratchet.DefaultMaskingPolicy{}, true}, {ratchet.DefaultMaskingPolicy{Extra: []string{ratchet.TraceContextField}}, false}} {
		reader, err := ratchet.NewClient(store, ratchet.ClientOptions{MaskPayloads: true, MaskingPolicy: c.policy})
		require.NoError(t, err)
		d, err := reader.JobDetail(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, c.kept, len(d.Job.TraceContext) > 0, "policy %+v", c.policy)
	}
}
