package encryption_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/encryption"
	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// A codec in the payload pipeline: every payload, result, state and
// signal is sealed under the current key and bound to its job. Give it to
// the engine and the clients (engine.Options.Client.Codecs,
// ratchet.ClientOptions.Codecs); here it is called directly, as the
// pipeline calls it.
func ExampleCodec() {
	ctx := context.Background()
	secret := make([]byte, encryption.KeySize)
	if _, err := rand.Read(secret); err != nil {
		log.Fatal(err)
	}
	keys, err := encryption.NewStaticKeys("2026-12", map[string][]byte{"2026-12": secret})
	if err != nil {
		log.Fatal(err)
	}
	codec, err := encryption.NewCodec(keys, encryption.Options{Algorithm: encryption.XChaCha20Poly1305})
	if err != nil {
		log.Fatal(err)
	}
	job, other := uuid.New(), uuid.New()
	sealed, err := codec.Encode(ctx, ratchet.JobRef(ratchet.SurfaceTask, job), []byte(`{"card":"4111 1111 1111 1111"}`))
	if err != nil {
		log.Fatal(err)
	}
	id, _ := encryption.KeyID(sealed)
	fmt.Println("sealed under", id)

	plain, err := codec.Decode(ctx, ratchet.JobRef(ratchet.SurfaceTask, job), sealed)
	fmt.Println(string(plain), err)

	_, err = codec.Decode(ctx, ratchet.JobRef(ratchet.SurfaceTask, other), sealed)
	fmt.Println("copied to another job:", errors.Is(err, encryption.ErrIntegrity))
	_, err = codec.Decode(ctx, ratchet.JobRef(ratchet.SurfaceResult, job), sealed)
	fmt.Println("read as the job's result:", errors.Is(err, encryption.ErrIntegrity))
	// Output:
	// sealed under 2026-12
	// {"card":"4111 1111 1111 1111"} <nil>
	// copied to another job: true
	// read as the job's result: true
}
