package main

import (
	"fmt"
	"os"

	"github.com/fixpoint/fixpoint/schemas"
)

func main() {
	env, err := schemas.LoadEnvironment(os.Args[1:]...)
	if err != nil {
		fmt.Printf("ERR %T\n%v\n", err, err)
		return
	}
	fmt.Printf("%+v\n", *env.Env)
}
