package sqlcore

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// EncodeParams writes what encoding/json writes, and DecodeParams reads
// back what either wrote.
func TestParamsMatchEncodingJSON(t *testing.T) {
	for _, m := range []map[string]string{
		{},
		{"otel.traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{"b": "2", "a": "1", "ratchet.batch": "0190f7e2-5c1d-7000-8000-000000000001"},
		{"quote": `say "hi"`, "slash": `a\b`},
		{"html": "<a href='x'>&</a>", "ctl": "line\nbreak\ttab"},
		{"unicode": "grüße 日本", "sep": "a\u2028b"},
		{"bad": "\xff\xfe"},
		{"": ""},
	} {
		want, err := json.Marshal(m)
		require.NoError(t, err)
		got, err := EncodeParams(m)
		require.NoError(t, err)
		assert.Equal(t, string(want), got, "EncodeParams(%q)", m)
		back, err := DecodeParams(got)
		require.NoError(t, err)
		var viaJSON map[string]string
		require.NoError(t, json.Unmarshal(want, &viaJSON))
		assert.Equal(t, viaJSON, back, "DecodeParams(%s)", got)
	}
	s, err := EncodeParams(nil)
	require.NoError(t, err)
	assert.Equal(t, "", s)
}

// What the fast path does not read goes to encoding/json: spaces, escapes,
// and malformed text, which fails.
func TestDecodeParamsFallsBack(t *testing.T) {
	m, err := DecodeParams(`{ "a" : "1" , "b":"\u00e9"}`)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1", "b": "é"}, m)
	for _, bad := range []string{`{"a":"1",}`, `{"a":1}`, `{"a"}`, `{"a":"1"`, `not json`} {
		_, err := DecodeParams(bad)
		assert.Error(t, err, "DecodeParams(%s)", bad)
	}
}

func BenchmarkParams(b *testing.B) {
	m := map[string]string{"otel.traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	s, _ := EncodeParams(m)
	b.Run("EncodeParams", func(b *testing.B) {
		for b.Loop() {
			_, _ = EncodeParams(m)
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(m)
		}
	})
	b.Run("DecodeParams", func(b *testing.B) {
		for b.Loop() {
			_, _ = DecodeParams(s)
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		for b.Loop() {
			var m map[string]string
			_ = json.Unmarshal([]byte(s), &m)
		}
	})
}

// A ParamsEncoder reuses the text of equal params, and only of equal ones.
func TestParamsEncoderReuses(t *testing.T) {
	var pe ParamsEncoder
	a, err := pe.Encode(map[string]string{"otel": "x"})
	require.NoError(t, err)
	b, err := pe.Encode(map[string]string{"otel": "x"})
	require.NoError(t, err)
	c, err := pe.Encode(map[string]string{"otel": "y"})
	require.NoError(t, err)
	d, err := pe.Encode(nil)
	require.NoError(t, err)
	assert.Equal(t, []string{`{"otel":"x"}`, `{"otel":"x"}`, `{"otel":"y"}`, ""}, []string{a, b, c, d})
}
