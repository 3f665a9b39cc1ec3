package ratchetotel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/trace"
)

// The compact param reads back as the span it was written from; what does
// not decode, or decodes to an invalid context, links nothing.
func TestCompactParam(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:  trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}, TraceFlags: trace.FlagsSampled})
	v := compact(sc)
	assert.Len(t, v, 32)
	back, ok := fromCompact(v)
	assert.True(t, ok)
	assert.Equal(t, sc.TraceID(), back.TraceID())
	assert.Equal(t, sc.SpanID(), back.SpanID())
	assert.True(t, back.IsSampled() && back.IsRemote())
	for _, bad := range []string{"", "short", v[:31] + "!", v + "AA", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		_, ok := fromCompact(bad)
		assert.False(t, ok, "fromCompact(%q)", bad)
	}
}
