package ratchetotel

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// instrumentation names the tracer.
const instrumentation = "github.com/ratchet-go/ratchet/tracing/otel"

// ParamPrefix starts the job params that carry the submitter's trace
// context through a propagator of the application's ("otel.traceparent",
// "otel.tracestate" for W3C, "otel.b3" for B3, ...).
const ParamPrefix = "otel."

// CompactParam is the job param that carries the submitter's trace
// context under the default propagator (W3C trace context) when it has no
// trace state: the trace id and the span id, 24 bytes in unpadded base64url
// (32 characters), the span being sampled. It is a third of the size of a
// W3C traceparent param, and every job of a traced submission carries it
// through each write of its row.
const CompactParam = "otel"

// compact encodes sc as CompactParam's value.
func compact(sc trace.SpanContext) string {
	var b [24]byte
	tid, sid := sc.TraceID(), sc.SpanID()
	copy(b[:16], tid[:])
	copy(b[16:], sid[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// fromCompact reads CompactParam's value back; ok is false for one that
// does not decode.
func fromCompact(v string) (trace.SpanContext, bool) {
	var b [24]byte
	if base64.RawURLEncoding.DecodedLen(len(v)) != len(b) {
		return trace.SpanContext{}, false
	}
	if n, err := base64.RawURLEncoding.Decode(b[:], []byte(v)); err != nil || n != len(b) {
		return trace.SpanContext{}, false
	}
	var tid trace.TraceID
	var sid trace.SpanID
	copy(tid[:], b[:16])
	copy(sid[:], b[16:])
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
	return sc, sc.IsValid()
}

// Options configure the middleware. The zero value uses the global
// TracerProvider and the W3C trace context propagator.
type Options struct {
	// TracerProvider makes the tracer; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// Propagator writes and reads the trace context of a job; nil means
	// propagation.TraceContext{} (W3C).
	Propagator propagation.TextMapPropagator
	// Sanitizer turns an error into the text a span records; nil means
	// ratchet.DefaultSanitizer{}, as the engine stores errors.
	Sanitizer spi.ErrorSanitizer
}

func (o Options) tracer() trace.Tracer {
	tp := o.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(instrumentation)
}

func (o Options) propagator() propagation.TextMapPropagator {
	if o.Propagator == nil {
		return propagation.TraceContext{}
	}
	return o.Propagator
}

// carry returns the params that carry the trace context of ctx, whose span
// is sc: CompactParam under the default propagator, else what the
// propagator injects.
func (o Options) carry(ctx context.Context, sc trace.SpanContext, prop propagation.TextMapPropagator) params {
	if o.Propagator == nil && sc.TraceState().Len() == 0 {
		return params{CompactParam: compact(sc)}
	}
	carried := params{}
	prop.Inject(ctx, carried)
	return carried
}

// submitter returns the span context that the job's params carry, if any.
func submitter(j *ratchet.Job, prop propagation.TextMapPropagator) (trace.SpanContext, bool) {
	if len(j.Params) == 0 {
		return trace.SpanContext{}, false
	}
	if v, ok := j.Params[CompactParam]; ok {
		return fromCompact(v)
	}
	sc := trace.SpanContextFromContext(prop.Extract(context.Background(), params(j.Params)))
	return sc, sc.IsValid()
}

func (o Options) fail(span trace.Span, err error) {
	s := o.Sanitizer
	if s == nil {
		s = ratchet.DefaultSanitizer{}
	}
	msg := s.Sanitize(err)
	span.RecordError(errors.New(msg))
	span.SetStatus(codes.Error, msg)
}

// params is a job's params as a TextMapCarrier, its keys under
// ParamPrefix.
type params map[string]string

func (p params) Get(key string) string { return p[ParamPrefix+key] }

func (p params) Set(key, value string) { p[ParamPrefix+key] = value }

func (p params) Keys() []string {
	var out []string
	for k := range p {
		if rest, ok := strings.CutPrefix(k, ParamPrefix); ok {
			out = append(out, rest)
		}
	}
	return out
}

// InsertMiddleware traces each submission: a producer span "ratchet
// submit" around the store's write, whose context it stores with every
// job of the call when the span is sampled.
func InsertMiddleware(o Options) ratchet.InsertMiddleware {
	tracer, prop := o.tracer(), o.propagator()
	return func(ctx context.Context, jobs []*ratchet.Job, next ratchet.InsertFunc) ([]spi.InsertResult, error) {
		attrs := []attribute.KeyValue{
			attribute.String("messaging.system", "ratchet"),
			attribute.String("messaging.operation.type", "send"),
			attribute.Int("messaging.batch.message_count", len(jobs)),
		}
		if len(jobs) > 0 {
			attrs = append(attrs, attribute.String("ratchet.task", jobs[0].TaskName))
		}
		ctx, span := tracer.Start(ctx, "ratchet submit", trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
		defer span.End()
		// One context for every job of the call: inject it once, copy it.
		// A span that is not sampled is not recorded: a link to it would
		// lead nowhere, and its context would only weigh on every row.
		if !span.SpanContext().IsSampled() {
			res, err := next(ctx, jobs)
			return res, err
		}
		carried := o.carry(ctx, span.SpanContext(), prop)
		for _, j := range jobs {
			if j.Params == nil {
				j.Params = make(map[string]string, len(carried))
			}
			for k, v := range carried {
				j.Params[k] = v
			}
		}
		res, err := next(ctx, jobs)
		if err != nil {
			o.fail(span, err)
		}
		return res, err
	}
}

// WorkMiddleware traces each execution: a consumer span "ratchet run
// TASK", a new root linked to the span that submitted the job (when its
// params carry one), with the job's id, task and priority (its run and
// crash count when it is not its first), and the error a failed run
// returned.
func WorkMiddleware(o Options) ratchet.WorkMiddleware {
	tracer, prop := o.tracer(), o.propagator()
	var names sync.Map // task → its span's name, built once
	return func(ctx context.Context, j *ratchet.Job, next ratchet.WorkFunc) (any, error) {
		name, ok := names.Load(j.TaskName)
		if !ok {
			name, _ = names.LoadOrStore(j.TaskName, "ratchet run "+j.TaskName)
		}
		attrs := make([]attribute.KeyValue, 0, 7)
		attrs = append(attrs, systemAttr, processAttr,
			attribute.String("messaging.message.id", j.ID.String()),
			attribute.String("ratchet.task", j.TaskName),
			attribute.Int("ratchet.priority", int(j.Priority)))
		if j.CrashCount > 0 {
			attrs = append(attrs, attribute.Int("ratchet.crash_count", j.CrashCount))
		}
		if jc, ok := ratchet.JobFromContext(ctx); ok && jc.Run > 1 {
			attrs = append(attrs, attribute.Int("ratchet.run", jc.Run))
		}
		opts := make([]trace.SpanStartOption, 0, 4)
		opts = append(opts, consumerKind, newRoot, trace.WithAttributes(attrs...))
		if sc, ok := submitter(j, prop); ok {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
		}
		ctx, span := tracer.Start(ctx, name.(string), opts...)
		defer span.End()
		res, err := next(ctx, j)
		if err != nil {
			o.fail(span, err)
		}
		return res, err
	}
}

// The constant parts of the spans.
var (
	systemAttr   = attribute.String("messaging.system", "ratchet")
	processAttr  = attribute.String("messaging.operation.type", "process")
	consumerKind = trace.WithSpanKind(trace.SpanKindConsumer)
	newRoot      = trace.WithNewRoot()
)
