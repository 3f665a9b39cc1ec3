package ratchet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// MaskedValue replaces a sensitive field's value in a masked job detail.
const MaskedValue = "***"

// MaskFieldsProperty is the job property that names, comma-separated,
// fields the DefaultMaskingPolicy masks in that job's details besides its
// built-in names: a per-job decision (WithProperty(MaskFieldsProperty,
// "iban,dob")).
const MaskFieldsProperty = "ratchet.mask"

// MaskingContext is the job a masking decision is for (the spec's
// MaskingContext): its id and its properties (empty where the store keeps
// none).
type MaskingContext struct {
	JobID      uuid.UUID
	Properties map[string]string
}

// MaskingPolicy decides which fields of a job's arguments and result are
// masked in its details (the spec's PayloadMaskingPolicy), when masking is
// on (ClientOptions.MaskPayloads, RATCHET_MASK_PAYLOADS). It never changes
// what is stored or what a body receives. Implementations must be safe for
// concurrent use.
type MaskingPolicy interface {
	IsSensitiveField(field string, mc MaskingContext) bool
}

// DefaultMaskingPolicy masks the fields of common credential and personal
// names (password, secret, token, api key, authorization, ssn, card
// number, cvv, pin, private key, ..., and any name ending in token,
// secret, password or api key; compared without case, "_" and "-"),
// those of Extra, and those the job's MaskFieldsProperty names.
type DefaultMaskingPolicy struct {
	Extra []string
}

var sensitiveNames = map[string]bool{}

// sensitiveSuffixes end the names that are sensitive whatever precedes
// them: session_token, client_secret, db_password, stripe_api_key.
var sensitiveSuffixes = []string{"token", "secret", "password", "passwd", "apikey", "privatekey", "passphrase"}

func init() {
	for _, n := range []string{"password", "passwd", "pwd", "secret", "clientsecret", "token", "accesstoken", "refreshtoken",
		"idtoken", "apikey", "apisecret", "authorization", "auth", "credentials", "ssn", "socialsecuritynumber",
		"creditcard", "cardnumber", "cardno", "pan", "cvv", "cvc", "pin", "privatekey", "secretkey", "passphrase"} {
		sensitiveNames[n] = true
	}
}

// fieldKey is a field name as the default policy compares it.
func fieldKey(s string) string {
	return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(s))
}

// IsSensitiveField implements MaskingPolicy.
func (p DefaultMaskingPolicy) IsSensitiveField(field string, mc MaskingContext) bool {
	k := fieldKey(field)
	if sensitiveNames[k] {
		return true
	}
	for _, suffix := range sensitiveSuffixes {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	for _, x := range p.Extra {
		if fieldKey(x) == k {
			return true
		}
	}
	for _, x := range strings.Split(mc.Properties[MaskFieldsProperty], ",") {
		if x = strings.TrimSpace(x); x != "" && fieldKey(x) == k {
			return true
		}
	}
	return false
}

// MaskJSON returns data, a JSON document, with the value of every member
// whose name p finds sensitive replaced by MaskedValue, at any depth. A
// document that is not JSON is masked whole (its MaskedValue as a JSON
// string), since its fields cannot be told apart.
func MaskJSON(data []byte, mc MaskingContext, p MaskingPolicy) []byte {
	if len(bytes.TrimSpace(data)) == 0 {
		return data
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		b, _ := json.Marshal(MaskedValue)
		return b
	}
	out, err := json.Marshal(maskValue(v, mc, p))
	if err != nil {
		b, _ := json.Marshal(MaskedValue)
		return b
	}
	return out
}

func maskValue(v any, mc MaskingContext, p MaskingPolicy) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if p.IsSensitiveField(k, mc) {
				x[k] = MaskedValue
			} else {
				x[k] = maskValue(e, mc, p)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = maskValue(e, mc, p)
		}
	}
	return v
}

// JobDetail is a job with its arguments and result decoded (through the
// payload pipeline) for people to read: the job details of the spec.
// With masking on, the sensitive fields of both are MaskedValue, and so
// are the values of the job's params whose keys the policy finds
// sensitive; the trace context of the submitter (Job.TraceContext) is left
// out when the policy finds the field TraceContextField sensitive.
type JobDetail struct {
	// Job is the job as stored, without its Payload and Result bytes
	// (which may be ciphertext, or, unmasked, secrets).
	Job *Job
	// Arguments and Result are the serialized arguments and result (JSON
	// with the default serializer); Result is nil when none is stored.
	Arguments, Result json.RawMessage
	// Masked says whether masking was applied.
	Masked bool
	// Waiting says why the job, not finished, is not running; nil when it
	// runs or has finished.
	Waiting *Waiting
}

// TraceContextField is the field name a MaskingPolicy is asked about for a
// job's trace context (Job.TraceContext) in its details.
const TraceContextField = "traceContext"

// maskParams returns params with the values of the sensitive keys masked
// (params itself when none is).
func maskParams(params map[string]string, mc MaskingContext, p MaskingPolicy) map[string]string {
	var out map[string]string
	for k := range params {
		if p.IsSensitiveField(k, mc) {
			if out == nil {
				out = make(map[string]string, len(params))
				for k, v := range params {
					out[k] = v
				}
			}
			out[k] = MaskedValue
		}
	}
	if out == nil {
		return params
	}
	return out
}

// maskJob masks j's params and trace context in place, as the client's
// masking policy says, and returns the masking context it used (with the
// job's properties, read when j carries none).
func (c *Client) maskJob(ctx context.Context, j *Job) (MaskingContext, error) {
	mc := MaskingContext{JobID: j.ID, Properties: j.Properties}
	if mc.Properties == nil {
		if ps := spi.CapabilitiesOf(c.store).Properties; ps != nil {
			// Not found: an archived job, whose properties GetJob read
			// with it (none, since they are nil).
			var err error
			if mc.Properties, err = ps.GetPropertiesByPrefix(ctx, j.ID, ""); err != nil && !errors.Is(err, ErrNotFound) {
				return mc, fmt.Errorf("properties: %w", err)
			}
		}
	}
	j.Params = maskParams(j.Params, mc, c.mask)
	if len(j.TraceContext) > 0 && c.mask.IsSensitiveField(TraceContextField, mc) {
		j.TraceContext = nil
	}
	return mc, nil
}

// MaskJobs masks, in place, what a listing shows of jobs (ListJobs'
// page: params and trace context; a listing carries no arguments or
// results) as JobDetail masks one job, when the client masks
// (ClientOptions.MaskPayloads); otherwise it changes nothing. A job with
// neither params nor a trace context costs nothing; the others may cost
// a read of their properties (a per-job masking decision).
func (c *Client) MaskJobs(ctx context.Context, jobs []*Job) error {
	if c.mask == nil {
		return nil
	}
	for _, j := range jobs {
		if len(j.Params) == 0 && len(j.TraceContext) == 0 {
			continue
		}
		if _, err := c.maskJob(ctx, j); err != nil {
			return fmt.Errorf("ratchet: mask job %s: %w", j.ID, err)
		}
	}
	return nil
}

// JobDetail returns job id with its arguments and result decoded, masked
// as the client's masking says (ClientOptions.MaskPayloads). A job whose
// values do not decode (a wrong key, a tampered value) is an error that
// names the problem; an unknown id wraps ErrNotFound.
func (c *Client) JobDetail(ctx context.Context, id uuid.UUID) (*JobDetail, error) {
	j, err := c.GetJob(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &JobDetail{Masked: c.mask != nil}
	args, err := c.pipe.DecodeBytes(ctx, JobRef(SurfaceTask, j.ID), j.Payload)
	if err != nil {
		return nil, fmt.Errorf("ratchet: job detail %s: arguments: %w", id, err)
	}
	var res []byte
	if j.Result != nil {
		if res, err = c.pipe.DecodeBytes(ctx, JobRef(SurfaceResult, j.ID), j.Result); err != nil {
			return nil, fmt.Errorf("ratchet: job detail %s: result: %w", id, err)
		}
	}
	if c.mask != nil {
		mc, err := c.maskJob(ctx, j)
		if err != nil {
			return nil, fmt.Errorf("ratchet: job detail %s: %w", id, err)
		}
		args = MaskJSON(args, mc, c.mask)
		if res != nil {
			res = MaskJSON(res, mc, c.mask)
		}
	}
	d.Arguments, d.Result = args, res
	j.Payload, j.Result = nil, nil
	d.Job = j
	if d.Waiting, err = c.waiting(ctx, j); err != nil {
		return nil, fmt.Errorf("ratchet: job detail %s: why it waits: %w", id, err)
	}
	return d, nil
}
