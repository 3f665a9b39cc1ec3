package ratchetotel

import (
	"context"
	"encoding/base64"
	"encoding/json"
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
const instrumentation = "github.com/ratchet-go/ratchet/tracing/ratchetotel"

// The trace context of a submission is stored with each of its jobs in
// Job.TraceContext, in one of two forms told apart by the first byte:
//
//   - formatCompact (under the default W3C propagator, with no trace
//     state): the trace id and the span id, 24 bytes, the span being
//     sampled; 25 bytes in all, which every job of a traced submission
//     carries through each write of its row;
//   - formatCarrier (an application's propagator, or a trace state): the
//     fields the propagator injects, as a JSON object of strings.
//
// A carrier larger than spi.MaxTraceContextBytes is not stored: the run
// then has no link, and the submission loses nothing.
const (
	formatCompact = 0x01
	formatCarrier = 0x02
)

// ParamPrefix starts the job params that carried the submitter's trace
// context through a propagator of the application's ("otel.traceparent",
// "otel.tracestate" for W3C, ...) in jobs submitted before the trace
// context had a field of its own (schema version 12); WorkMiddleware still
// reads them.
const ParamPrefix = "otel."

// CompactParam is the job param that carried the submitter's trace context
// under the default propagator before the trace context had a field of its
// own: the trace id and the span id in unpadded base64url. WorkMiddleware
// still reads it.
const CompactParam = "otel"

// compact encodes sc in formatCompact.
func compact(sc trace.SpanContext) []byte {
	b := make([]byte, 25)
	tid, sid := sc.TraceID(), sc.SpanID()
	b[0] = formatCompact
	copy(b[1:17], tid[:])
	copy(b[17:], sid[:])
	return b
}

// fromCompact reads formatCompact back; ok is false for bytes that are not
// a valid context in it.
func fromCompact(b []byte) (trace.SpanContext, bool) {
	if len(b) != 25 || b[0] != formatCompact {
		return trace.SpanContext{}, false
	}
	return sampledRemote([16]byte(b[1:17]), [8]byte(b[17:]))
}

// fromCompactParam reads CompactParam's value back.
func fromCompactParam(v string) (trace.SpanContext, bool) {
	var b [24]byte
	if base64.RawURLEncoding.DecodedLen(len(v)) != len(b) {
		return trace.SpanContext{}, false
	}
	if n, err := base64.RawURLEncoding.Decode(b[:], []byte(v)); err != nil || n != len(b) {
		return trace.SpanContext{}, false
	}
	return sampledRemote([16]byte(b[:16]), [8]byte(b[16:]))
}

// sampledRemote is the remote, sampled span context of tid and sid.
func sampledRemote(tid trace.TraceID, sid trace.SpanID) (trace.SpanContext, bool) {
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

// carry returns the trace context of ctx, whose span is sc, as the jobs
// store it: formatCompact under the default propagator, else formatCarrier
// with what the propagator injects; nil when that is too large to store.
func (o Options) carry(ctx context.Context, sc trace.SpanContext, prop propagation.TextMapPropagator) []byte {
	if o.Propagator == nil && sc.TraceState().Len() == 0 {
		return compact(sc)
	}
	fields := propagation.MapCarrier{}
	prop.Inject(ctx, fields)
	b, err := json.Marshal(map[string]string(fields))
	if err != nil || 1+len(b) > spi.MaxTraceContextBytes {
		return nil
	}
	return append([]byte{formatCarrier}, b...)
}

// submitter returns the span context that the job carries, if any: its
// TraceContext, or the params of a job submitted before it had one.
func submitter(j *ratchet.Job, prop propagation.TextMapPropagator) (trace.SpanContext, bool) {
	switch tc := j.TraceContext; {
	case len(tc) == 0:
	case tc[0] == formatCompact:
		return fromCompact(tc)
	case tc[0] == formatCarrier:
		var fields map[string]string
		if json.Unmarshal(tc[1:], &fields) != nil {
			return trace.SpanContext{}, false
		}
		sc := trace.SpanContextFromContext(prop.Extract(context.Background(), propagation.MapCarrier(fields)))
		return sc, sc.IsValid()
	default:
		return trace.SpanContext{}, false
	}
	if len(j.Params) == 0 {
		return trace.SpanContext{}, false
	}
	if v, ok := j.Params[CompactParam]; ok {
		return fromCompactParam(v)
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

// params is the params of a job submitted before schema version 12 as a
// TextMapCarrier, its keys under ParamPrefix.
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
// job of the call (Job.TraceContext) when the span is sampled.
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
		// One context for every job of the call: encoded once, shared (the
		// stores copy what they keep, and read it only). A span that is
		// not sampled is not recorded: a link to it would lead nowhere,
		// and its context would only weigh on every row.
		if !span.SpanContext().IsSampled() {
			res, err := next(ctx, jobs)
			return res, err
		}
		if carried := o.carry(ctx, span.SpanContext(), prop); carried != nil {
			for _, j := range jobs {
				j.TraceContext = carried
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
