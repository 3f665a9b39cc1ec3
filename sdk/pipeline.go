package ratchet

import (
	"context"
	"fmt"

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

// PayloadCodec transforms serialized payloads on their way to the store and
// back: encryption and compression plug in here. Encode runs after the size
// check, so the limit is measured on the serialized bytes (invariant 7).
// Decode must undo Encode, and fail with an error that names the problem
// (a wrong key, a corrupted envelope) rather than return other bytes.
// Implementations must be safe for concurrent use.
type PayloadCodec interface {
	Encode(ctx context.Context, s Surface, data []byte) ([]byte, error)
	Decode(ctx context.Context, s Surface, data []byte) ([]byte, error)
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

// Encode serializes v and passes it on as EncodeBytes does. task names the
// task in errors.
func (p *Pipeline) Encode(ctx context.Context, s Surface, task string, v any) ([]byte, error) {
	b, err := p.ser.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("ratchet: encode %s payload of task %q: %w", s, task, err)
	}
	return p.EncodeBytes(ctx, s, task, b)
}

// EncodeBytes takes bytes already serialized: it checks their size (a
// *PayloadTooLargeError over the limit) and runs the codecs.
func (p *Pipeline) EncodeBytes(ctx context.Context, s Surface, task string, b []byte) ([]byte, error) {
	if s.limited() && len(b) > p.limit {
		return nil, &PayloadTooLargeError{Surface: string(s), Task: task, Size: len(b), Limit: p.limit}
	}
	for _, c := range p.codecs {
		var err error
		if b, err = c.Encode(ctx, s, b); err != nil {
			return nil, fmt.Errorf("ratchet: encode %s payload of task %q: %w", s, task, err)
		}
	}
	return b, nil
}

// DecodeBytes runs the codecs backwards over stored bytes and returns the
// serialized payload.
func (p *Pipeline) DecodeBytes(ctx context.Context, s Surface, b []byte) ([]byte, error) {
	for i := len(p.codecs) - 1; i >= 0; i-- {
		var err error
		if b, err = p.codecs[i].Decode(ctx, s, b); err != nil {
			return nil, fmt.Errorf("ratchet: decode %s payload: %w", s, err)
		}
	}
	return b, nil
}

// Decode runs DecodeBytes and deserializes the payload into v.
func (p *Pipeline) Decode(ctx context.Context, s Surface, b []byte, v any) error {
	b, err := p.DecodeBytes(ctx, s, b)
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
