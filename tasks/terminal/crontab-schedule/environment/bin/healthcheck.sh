#!/bin/sh
echo healthcheck
