// Package release releases the modules of a Go workspace together, at one
// version, the way OpenTelemetry-Go releases its many modules from one
// repository: every module requires its siblings at the version being
// released, and every module gets a tag of its own (sdk/v0.1.0,
// stores/postgres/v0.1.0, ...).
//
// [Run] does a release in steps, each of which the others build on:
//
//  1. [Workspace] lists the modules of the go.work file.
//  2. [Rewrite] sets every requirement of a sibling module to the version
//     (replace lines stay: the go command ignores them in a dependency, and
//     they keep `go mod tidy` working inside one module).
//  3. [BuildProxy] writes a file-based module proxy (the layout a module
//     proxy serves: <module>/@v/{list,V.info,V.mod,V.zip}) of the
//     rewritten tree.
//  4. [Verify] extracts each module's zip, as a user's go command would,
//     drops its replace directives and builds it with GOWORK=off through
//     that proxy, so that the published requirements are what is built.
//  5. [APIReport] compares each module's exported API with the previous
//     tag's (golang.org/x/exp/apidiff).
//  6. The rewrite is committed and the tags are created; with DryRun the
//     tracked files are left alone and the tags are only printed.
//
// [ProxyEnv] is the environment under which a go command resolves the
// modules from such a proxy and everything else from the module cache or
// the upstream proxy; the README's install test uses it too.
//
// Dependencies: golang.org/x/mod (go.mod and go.work parsing, module zips,
// semantic versions) and golang.org/x/exp/apidiff with golang.org/x/tools'
// go/packages (the API comparison): the go command's own libraries for
// the go command's formats.
package release
