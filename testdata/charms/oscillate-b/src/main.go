// Command reconcile is the oscillate-b test charm's reconcile hook.
package main

import "github.com/fixpoint/fixpoint/charmapi"

func main() { charmapi.Main(reconcile) }
