package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
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
	id, err := task.Submit(ctx, r.client, in, ratchet.WithProperty(ratchet.MaskFieldsProperty, "iban, email"))
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	assert.Equal(t, in, <-got, "the body receives the real values")

	d, err := r.client.JobDetail(ctx, id)
	require.NoError(t, err)
	assert.True(t, d.Masked)
	assert.JSONEq(t, `{"email":"***","password":"***","card":{"card_number":"***","cvv":"***","brand":"visa"},"iban":"***",
		"notes":[{"api-key":"***","text":"hi"}]}`, string(d.Arguments))
	assert.JSONEq(t, `{"session_token":"***","user":"u1"}`, string(d.Result))
	assert.Nil(t, d.Job.Payload, "no stored bytes in a detail")
	assert.Equal(t, ratchet.StatusSucceeded, d.Job.Status)

	plain, err := ratchet.NewClient(r.store, ratchet.ClientOptions{Codecs: []ratchet.PayloadCodec{codec}})
	require.NoError(t, err)
	d, err = plain.JobDetail(ctx, id)
	require.NoError(t, err)
	assert.False(t, d.Masked)
	assert.Contains(t, string(d.Arguments), "hunter2", "masking off: the detail is the decoded arguments")

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
