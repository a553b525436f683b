// Command reconcile is the oscillate-a test charm's reconcile hook.
package main

import "github.com/fixpoint/fixpoint/charmapi"

func main() { charmapi.Main(reconcile) }
