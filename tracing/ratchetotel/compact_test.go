package ratchetotel

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var testSpan = trace.NewSpanContext(trace.SpanContextConfig{
	TraceID: trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
	SpanID:  trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}, TraceFlags: trace.FlagsSampled})

// The compact form reads back as the span it was written from; what does
// not decode, or decodes to an invalid context, links nothing.
func TestCompact(t *testing.T) {
	b := compact(testSpan)
	assert.Len(t, b, 25)
	back, ok := fromCompact(b)
	assert.True(t, ok)
	assert.Equal(t, testSpan.TraceID(), back.TraceID())
	assert.Equal(t, testSpan.SpanID(), back.SpanID())
	assert.True(t, back.IsSampled() && back.IsRemote())
	zero := make([]byte, 25)
	zero[0] = formatCompact
	for _, bad := range [][]byte{nil, {formatCompact}, b[:24], append(append([]byte{}, b...), 0), append([]byte{formatCarrier}, b[1:]...), zero} {
		_, ok := fromCompact(bad)
		assert.False(t, ok, "fromCompact(%x)", bad)
	}
}

// The param of earlier jobs reads back too.
func TestCompactParam(t *testing.T) {
	v := "S_kvNXezTaajzpKdDg5HNgDwZ6oLqQK3"
	back, ok := fromCompactParam(v)
	assert.True(t, ok)
	assert.Equal(t, testSpan.TraceID(), back.TraceID())
	assert.Equal(t, testSpan.SpanID(), back.SpanID())
	for _, bad := range []string{"", "short", v[:31] + "!", v + "AA", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		_, ok := fromCompactParam(bad)
		assert.False(t, ok, "fromCompactParam(%q)", bad)
	}
}

// A trace state takes the carrier form; a carrier too large for a job is
// not stored: the submission goes on without a link.
func TestCarrier(t *testing.T) {
	o := Options{}
	small, err := trace.ParseTraceState("vendor=abc")
	require.NoError(t, err)
	sc := testSpan.WithTraceState(small)
	got := o.carry(trace.ContextWithSpanContext(context.Background(), sc), sc, propagation.TraceContext{})
	require.NotEmpty(t, got)
	assert.Equal(t, byte(formatCarrier), got[0])
	assert.Contains(t, string(got), `"tracestate":"vendor=abc"`)

	big, err := trace.ParseTraceState("vendor=" + strings.Repeat("x", 250) + ",other=" + strings.Repeat("y", 250))
	require.NoError(t, err)
	sc = testSpan.WithTraceState(big)
	assert.Nil(t, o.carry(trace.ContextWithSpanContext(context.Background(), sc), sc, propagation.TraceContext{}),
		"a carrier over %d bytes", spi.MaxTraceContextBytes)
}
