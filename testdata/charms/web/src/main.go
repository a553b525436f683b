// Command reconcile is the web charm's reconcile hook.
package main

import "github.com/fixpoint/fixpoint/charmapi"

func main() { charmapi.Main(reconcile) }
