#!/bin/sh
./t-abc
