// Command reconcile is the smallest hook that builds.
package main

func main() {}
