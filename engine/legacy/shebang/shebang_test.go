package shebang

import "testing"

func TestPOSIX(t *testing.T) {
	tests := []struct {
		line, opts string
		ok         bool
	}{
		{"#!/bin/sh", "", true},
		{"#! /bin/sh", "", true},
		{"#!/bin/sh\r", "", true},
		{"#!/usr/bin/env sh", "", true},
		{"#!/bin/sh -e", "-e", true},
		{"#!/bin/sh -eux", "-eux", true},
		{"#!/bin/sh -c", "", false},
		{"#!/bin/sh -e -x", "", false},
		{"#!/usr/bin/env sh -e", "", false},
		{"#!/bin/bash", "", false},
		{"#!/bin/shell", "", false},
		{"#!/usr/bin/python3", "", false},
		{"echo hi", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		opts, ok := POSIX(tt.line)
		if opts != tt.opts || ok != tt.ok {
			t.Errorf("POSIX(%q) = %q, %v; want %q, %v", tt.line, opts, ok, tt.opts, tt.ok)
		}
	}
}
