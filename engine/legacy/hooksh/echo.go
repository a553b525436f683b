package hooksh

import (
	"path/filepath"
	"strings"
)

// The interpreter's echo is bash's: it takes -e and -E and leaves
// backslashes alone. Debian's and Ubuntu's /bin/sh, the shell Juju hooks
// run under, is dash, whose echo takes only -n and always interprets
// backslash escapes; charms written against it rely on that
// (echo "a\tb"). fixpoint-sh's echo is the system shell's.

// dashEcho says whether /bin/sh is dash, read once per hook.
func dashEcho() bool {
	p, err := filepath.EvalSymlinks("/bin/sh")
	return err == nil && filepath.Base(p) == "dash"
}

// echoAsDash turns `echo ARGS` into the printf that prints what dash's
// echo prints.
func echoAsDash(args []string) []string {
	args = args[1:]
	newline := true
	if len(args) > 0 && args[0] == "-n" {
		newline, args = false, args[1:]
	}
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if !unescape(&b, a) {
			// \c: nothing more, not even the newline.
			return []string{"printf", "%s", b.String()}
		}
	}
	if newline {
		b.WriteByte('\n')
	}
	return []string{"printf", "%s", b.String()}
}

// unescape writes s with dash's echo escapes interpreted; false means \c
// ended the output.
func unescape(b *strings.Builder, s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'c':
			return false
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\':
			b.WriteByte('\\')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			// \0nnn or \nnn: up to three octal digits after the 0,
			// the byte's low 8 bits (\400 is NUL).
			if s[i] != '0' {
				i--
			}
			v := 0
			for n := 0; n < 3 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7'; n++ {
				i++
				v = v*8 + int(s[i]-'0')
			}
			b.WriteByte(byte(v))
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return true
}
