// Package tools holds the ratchet command (tools/cmd/ratchet) and its
// internal packages. Nothing imports this module.
//
// Dependencies beyond the Ratchet modules: github.com/schollz/progressbar/v3
// draws the progress bars of the demo and of the operator commands' bulk
// actions on a terminal (a solved problem, not worth
// hand-writing), and golang.org/x/term tells whether stderr is a terminal.
// github.com/spf13/cobra (with its github.com/spf13/pflag) is the ratchet
// command's tree: flags anywhere on the line, `ratchet help <command>`,
// unknown commands named with a suggestion, and the bash, zsh and fish
// completion scripts, which it generates from the tree. It was chosen over
// github.com/alecthomas/kong, which the module proxy also serves, because
// it generates the three completion scripts itself (kong needs a third
// party's package for that, and for bash only) and takes the commands'
// existing standard-library flag sets as they are (pflag's
// AddGoFlagSet), so that no flag changed its name or meaning.
// github.com/dustin/go-humanize writes counts with thousands separators
// ("1,200 jobs"); it was in the build already, through the SQLite driver.
// github.com/santhosh-tekuri/jsonschema/v6, in the tests only, checks
// every --json output against docs/cli.schema.json (JSON Schema 2020-12,
// which the standard library does not read).
package tools
