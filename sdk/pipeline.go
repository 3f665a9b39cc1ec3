package ratchet

import (
	"context"
	"fmt"
	"github.com/ratchet-go/ratchet/internal/stored"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Surface names what a payload is, for the size limit and the codecs: a
// codec may treat the surfaces differently (encrypt arguments, leave
// results alone).
type Surface string

// The surfaces that exist today.
const (
	// SurfaceTask is a job's arguments.
	SurfaceTask Surface = "task"
	// SurfaceResult is a succeeded job's result.
	SurfaceResult Surface = "result"
	// SurfaceCallback is the arguments of an OnSuccess or OnFailure
	// callback, measured on their own against the payload limit.
	SurfaceCallback Surface = "callback"
	// SurfaceBranch is the arguments of a workflow condition (When).
	SurfaceBranch Surface = "branch"
)

// limited reports whether the payload limit applies: to what is submitted
// (invariant 7), not to what a body returns.
func (s Surface) limited() bool { return s != SurfaceResult }

// Stored is the surface of the place a value of surface s is stored in:
// the arguments of a callback, of a batch child and of a recurring
// schedule's job are a job's payload (SurfaceTask), read back as any job's
// are. A codec that binds a value to its place (encryption's additional
// data) binds it to Stored, so that the engine, which reads every job's
// payload alike, opens it.
func (s Surface) Stored() Surface {
	switch s {
	case SurfaceCallback, SurfaceBatchChild:
		return SurfaceTask
	}
	return s
}

// PayloadRef names a value that the pipeline encodes or decodes: its
// surface, and what it belongs to, so that a codec can bind the value to
// its place (an encrypting codec's additional authenticated data): a value
// copied to another job, surface or scope then fails to decode.
type PayloadRef struct {
	Surface Surface
	// JobID is the job the value belongs to. It is zero where the value is
	// no one job's as it is encoded: a recurring schedule's arguments
	// (copied into each job it fires) and a signal delivered by key (to
	// every job waiting under it); Scope names those.
	JobID uuid.UUID
	// Scope is what a value of no one job belongs to: ScheduleScope(id) of
	// a schedule's arguments, SignalScope(name, key) of a signal by key.
	// A decode names the scope the job would have (empty for none), and a
	// codec binds to the job or the scope as the value was encoded.
	Scope string
}

// JobRef is the PayloadRef of a value of surface s that belongs to job
// id.
func JobRef(s Surface, id uuid.UUID) PayloadRef { return PayloadRef{Surface: s, JobID: id} }

// ScheduleScope is the PayloadRef.Scope of the arguments of recurring
// schedule id.
func ScheduleScope(id string) string { return "schedule\x00" + id }

// SignalScope is the PayloadRef.Scope of a signal name delivered by key.
func SignalScope(name, key string) string { return "signal\x00" + name + "\x00" + key }

// PayloadCodec transforms serialized payloads on their way to the store and
// back: encryption and compression plug in here. Encode runs after the size
// check, so the limit is measured on the serialized bytes (invariant 7).
// Decode must undo Encode, and fail with an error that names the problem
// (a wrong key, a corrupted envelope, a value bound to another job)
// rather than return other bytes. ref names the value (see PayloadRef).
// Implementations must be safe for concurrent use.
type PayloadCodec interface {
	Encode(ctx context.Context, ref PayloadRef, data []byte) ([]byte, error)
	Decode(ctx context.Context, ref PayloadRef, data []byte) ([]byte, error)
}

// Pipeline is the one path of payload bytes, used by the client and the
// engine for every surface: the serializer, then the size check, then the
// codecs in order (and back, in reverse order). The zero value is not
// ready; create it with NewPipeline, or take a client's with
// Client.Pipeline.
type Pipeline struct {
	ser    spi.PayloadSerializer
	limit  int
	codecs []PayloadCodec
}

// NewPipeline returns a pipeline over ser (nil means JSON) with the payload
// limit maxBytes (zero means DefaultMaxPayloadBytes) and the codecs.
func NewPipeline(ser spi.PayloadSerializer, maxBytes int, codecs ...PayloadCodec) (*Pipeline, error) {
	if maxBytes < 0 {
		return nil, invalidArg("negative MaxPayloadBytes %d", maxBytes)
	}
	for i, c := range codecs {
		if c == nil {
			return nil, invalidArg("payload codec %d is nil", i)
		}
	}
	if ser == nil {
		ser = JSONSerializer{}
	}
	if maxBytes == 0 {
		maxBytes = DefaultMaxPayloadBytes
	}
	return &Pipeline{ser: ser, limit: maxBytes, codecs: codecs}, nil
}

// Serializer returns the pipeline's serializer.
func (p *Pipeline) Serializer() spi.PayloadSerializer { return p.ser }

// MaxPayloadBytes returns the payload limit in bytes.
func (p *Pipeline) MaxPayloadBytes() int { return p.limit }

// hasCodecs reports whether the pipeline has codecs.
func (p *Pipeline) hasCodecs() bool { return len(p.codecs) > 0 }

// Encode serializes v and passes it on as EncodeBytes does. task names the
// task in errors.
func (p *Pipeline) Encode(ctx context.Context, ref PayloadRef, task string, v any) ([]byte, error) {
	b, err := p.ser.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("ratchet: encode %s payload of task %q: %w", ref.Surface, task, err)
	}
	return p.EncodeBytes(ctx, ref, task, b)
}

// EncodeBytes takes bytes already serialized: it checks their size (a
// *PayloadTooLargeError over the limit) and runs the codecs.
func (p *Pipeline) EncodeBytes(ctx context.Context, ref PayloadRef, task string, b []byte) ([]byte, error) {
	if ref.Surface.limited() && len(b) > p.limit {
		return nil, &PayloadTooLargeError{Surface: string(ref.Surface), Task: task, Size: len(b), Limit: p.limit}
	}
	for _, c := range p.codecs {
		var err error
		if b, err = c.Encode(ctx, ref, b); err != nil {
			return nil, fmt.Errorf("ratchet: encode %s payload of task %q: %w", ref.Surface, task, err)
		}
	}
	return b, nil
}

// DecodeBytes runs the codecs backwards over stored bytes and returns the
// serialized payload.
func (p *Pipeline) DecodeBytes(ctx context.Context, ref PayloadRef, b []byte) ([]byte, error) {
	for i := len(p.codecs) - 1; i >= 0; i-- {
		var err error
		if b, err = p.codecs[i].Decode(ctx, ref, b); err != nil {
			return nil, fmt.Errorf("ratchet: decode %s payload: %w", ref.Surface, err)
		}
	}
	return b, nil
}

// Rebind moves stored bytes from one place to another: decoded as from,
// encoded as to (a recurring schedule's arguments, bound to the schedule,
// copied into a job of its own). Without codecs it returns b as it is.
func (p *Pipeline) Rebind(ctx context.Context, from, to PayloadRef, task string, b []byte) ([]byte, error) {
	if len(p.codecs) == 0 {
		return b, nil
	}
	plain, err := p.DecodeBytes(ctx, from, b)
	if err != nil {
		return nil, err
	}
	return p.EncodeBytes(ctx, to, task, plain)
}

// EncodeText runs the codecs over a text stored as text (a job log line):
// without codecs it is s as it is; with them, a prefix and the base64 of
// their bytes, so that the column stays valid text.
func (p *Pipeline) EncodeText(ctx context.Context, ref PayloadRef, s string) (string, error) {
	if len(p.codecs) == 0 {
		return s, nil
	}
	b := []byte(s)
	for _, c := range p.codecs {
		var err error
		if b, err = c.Encode(ctx, ref, b); err != nil {
			return "", fmt.Errorf("ratchet: encode %s text: %w", ref.Surface, err)
		}
	}
	return stored.SealText(b), nil
}

// DecodeText undoes EncodeText; a text without its prefix (written before
// the codecs were on), or read by a pipeline without codecs, is returned
// as it is.
func (p *Pipeline) DecodeText(ctx context.Context, ref PayloadRef, s string) (string, error) {
	b, sealed, err := stored.SealedText(s)
	if !sealed || len(p.codecs) == 0 {
		return s, nil
	}
	if err != nil {
		return "", fmt.Errorf("ratchet: decode %s text: not base64: %w", ref.Surface, err)
	}
	if b, err = p.DecodeBytes(ctx, ref, b); err != nil {
		return "", err
	}
	return string(b), nil
}

// Decode runs DecodeBytes and deserializes the payload into v.
func (p *Pipeline) Decode(ctx context.Context, ref PayloadRef, b []byte, v any) error {
	b, err := p.DecodeBytes(ctx, ref, b)
	if err != nil {
		return err
	}
	return p.ser.Unmarshal(b, v)
}

// SerializedResult is a result as stored: its bytes (before the codecs)
// and its type name. Nil Data stores no result.
type SerializedResult struct {
	Data []byte
	Type string
}

// ResultStrategy serializes what a body returned, before it is stored (the
// spec's ResultPersistenceStrategy): a strategy may drop results, shrink
// them, or store a reference instead. The codecs still run on what it
// returns. An error stores no result, with a warning; the job still
// succeeds.
type ResultStrategy interface {
	SerializeResult(ctx context.Context, jobID uuid.UUID, result any) (SerializedResult, error)
}

// SerializerResults is the default ResultStrategy: the result serialized
// with the serializer, and its TypeName.
type SerializerResults struct{ Serializer spi.PayloadSerializer }

// SerializeResult implements ResultStrategy.
func (r SerializerResults) SerializeResult(_ context.Context, _ uuid.UUID, result any) (SerializedResult, error) {
	if result == nil {
		return SerializedResult{}, nil
	}
	ser := r.Serializer
	if ser == nil {
		ser = JSONSerializer{}
	}
	b, err := ser.Marshal(result)
	if err != nil {
		return SerializedResult{}, err
	}
	return SerializedResult{Data: b, Type: TypeName(result)}, nil
}
