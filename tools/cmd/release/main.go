// Command release releases every module of the repository together, at one
// version: it sets every sibling requirement to that version, builds every
// module through a file-based module proxy of the rewritten tree with
// GOWORK=off and no replace directive, reports the API changes since the
// previous tag, commits the rewrite and tags every module (sdk/v0.1.0,
// stores/postgres/v0.1.0, ...). docs/releasing.md has the procedure.
//
//	go run ./tools/cmd/release v0.1.0 --dry-run   # build and report; change nothing, print the tags
//	go run ./tools/cmd/release v0.1.0             # then commit, tag, and push the tags
//	go run ./tools/cmd/release crosslink          # give every go.mod a replace line to each sibling's folder
//
// Run it from the repository root.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/ratchet-go/ratchet/tools/internal/release"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dryRun := fs.Bool("dry-run", false, "build and report, print the tags; change no tracked file and create no tag")
	keep := fs.Bool("keep", false, "keep the scratch folder (the rewritten tree, the module proxy, the builds)")
	root := fs.String("root", ".", "the repository root (it holds go.work)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: release VERSION [--dry-run] [--keep] [--root DIR]\n       release crosslink [--root DIR]")
		fs.PrintDefaults()
	}
	// Flags may come before or after the version.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) != 1 {
		fs.Usage()
		return 2
	}
	if positional[0] == "crosslink" {
		if err := crosslink(*root, stdout); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		return 0
	}
	err := release.Run(ctx, release.Options{Root: *root, Version: positional[0], DryRun: *dryRun, Keep: *keep, Out: stdout})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// crosslink writes the replace lines that release.Crosslink adds.
func crosslink(root string, stdout io.Writer) error {
	mods, err := release.Workspace(root)
	if err != nil {
		return err
	}
	changed, err := release.Crosslink(root, mods)
	if err != nil {
		return err
	}
	for dir, data := range changed {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(dir), "go.mod"), data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s/go.mod: replace lines to its siblings added\n", dir)
	}
	return nil
}
