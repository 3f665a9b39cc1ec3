package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ratchet-go/ratchet/encryption"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/postgres"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

// reencryptCommand is `ratchet keys reencrypt`: the key rotation's rewrite of the
// stored values under the current key (encryption.Codec.Reencrypt and
// ReencryptSchedules), with
// the keys of RATCHET_ENCRYPTION_KEYS and RATCHET_ENCRYPTION_CURRENT_KEY.
func reencryptCommand(fs *flag.FlagSet) action {
	store := fs.String("store", "", "the store: a postgres://... DSN, a mysql://..., sqlserver://..., oracle://... or mongodb://... URL, or sqlite:PATH")
	schema := fs.String("schema", postgres.DefaultSchema, "PostgreSQL schema")
	db := fs.String("db", "", "SQLite database file for --store sqlite")
	batch := fs.Int("batch", encryption.DefaultReencryptBatch, "jobs read and rewritten at a time")
	after := fs.String("after", "", "resume after this job id (the last one an interrupted pass printed)")
	archive := fs.Bool("archive", false, "resume in the archive's pass (when the interrupted pass said it was there)")
	alg := fs.String("algorithm", "aes-256-gcm", "what values are sealed with: aes-256-gcm or xchacha20-poly1305")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		fail := func(err error) int {
			fmt.Fprintf(stderr, "ratchet keys reencrypt: %v\n", err)
			return 1
		}
		if *store == "" {
			fmt.Fprintln(stderr, "ratchet keys reencrypt: --store is required")
			return 2
		}
		o := encryption.ReencryptOptions{BatchSize: *batch, Archive: *archive}
		if *after != "" {
			id, err := uuid.Parse(*after)
			if err != nil {
				return fail(fmt.Errorf("--after %q: %w", *after, err))
			}
			o.After = id
		}
		var algorithm encryption.Algorithm
		switch strings.ToLower(*alg) {
		case "aes-256-gcm":
			algorithm = encryption.AES256GCM
		case "xchacha20-poly1305":
			algorithm = encryption.XChaCha20Poly1305
		default:
			return fail(fmt.Errorf("--algorithm %q: want aes-256-gcm or xchacha20-poly1305", *alg))
		}
		keys, err := encryption.EnvKeys()
		if err != nil {
			return fail(err)
		}
		codec, err := encryption.NewCodec(keys, encryption.Options{Algorithm: algorithm})
		if err != nil {
			return fail(err)
		}
		st, err := storeflag.Open(ctx, *store, *db, *schema, false)
		if err != nil {
			return fail(storeflag.OpenError(*store, err))
		}
		defer st.Close()
		rw := spi.CapabilitiesOf(st.Store).Rewriter
		if rw == nil {
			return fail(fmt.Errorf("%s cannot rewrite values in place (no spi.ValueRewriter)", st.Desc))
		}
		cur, _ := keys.CurrentKey(ctx)
		fmt.Fprintf(stderr, "ratchet keys reencrypt: %s, under key %q\n", st.Desc, cur.ID)
		pages := 0
		var bar *progressbar.ProgressBar
		if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			// On a terminal, a bar counting the jobs (their number is not
			// known: no count of the table); elsewhere, a line every 20 pages.
			bar = progressbar.NewOptions(-1, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("reencrypt"),
				progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("jobs"),
				progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
			defer func() { _ = bar.Finish() }()
		}
		o.Progress = func(s encryption.ReencryptStats) {
			if bar != nil {
				_ = bar.Set(s.Jobs)
				return
			}
			if pages++; pages%20 == 0 {
				where := ""
				if s.InArchive {
					where = " (archive)"
				}
				fmt.Fprintf(stderr, "  %d jobs, %d values rewritten, last job %s%s\n", s.Jobs, s.Rewritten, s.Last, where)
			}
		}
		s, err := codec.Reencrypt(ctx, rw, o)
		fmt.Fprintf(stdout, "reencrypt: %d jobs, %d values: %d rewritten (%d were plaintext), %d already under %q, %d changed by a concurrent write, %d unreadable; last job %s\n",
			s.Jobs, s.Values, s.Rewritten, s.Plaintext, s.Current, cur.ID, s.Changed, s.Unreadable, s.Last)
		detail := fmt.Sprintf("%d values rewritten of %d jobs, %d unreadable; last job %s (ratchet command)", s.Rewritten, s.Jobs, s.Unreadable, s.Last)
		if err != nil {
			detail += "; stopped: " + err.Error()
		}
		audit(ctx, st, "keys.reencrypt", "key "+cur.ID, s.Jobs, detail, stderr)
		switch {
		case errors.Is(err, context.Canceled):
			resume := "--after " + s.Last.String()
			if s.InArchive {
				resume += " --archive"
			}
			fmt.Fprintf(stderr, "ratchet keys reencrypt: interrupted; resume with %s\n", resume)
			return 1
		case err != nil:
			return fail(err)
		}
		if ss := spi.CapabilitiesOf(st.Store).Schedules; ss != nil {
			n, err := codec.ReencryptSchedules(ctx, ss)
			fmt.Fprintf(stdout, "reencrypt: %d recurring schedules rewritten\n", n)
			if err != nil {
				return fail(err)
			}
		}
		return 0
	}
}
