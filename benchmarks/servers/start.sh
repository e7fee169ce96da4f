#!/bin/sh
# Start Debian's nginx, Apache httpd and lighttpd on 127.0.0.1:18081-18083, each serving
# /usr/share/doc with the configuration beside this script (docs/realsite.md, "Real
# servers"); their logs and pid files go to /tmp/xyleme-servers. Stop each with
# kill "$(cat /tmp/xyleme-servers/NAME.main)".
set -e
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p /tmp/xyleme-servers && chmod 777 /tmp/xyleme-servers
nginx -c "$here/nginx.conf" > /tmp/xyleme-servers/nginx.out 2>&1 &
echo $! > /tmp/xyleme-servers/nginx.main
APACHE_RUN_DIR=/tmp/xyleme-servers APACHE_LOCK_DIR=/tmp/xyleme-servers \
APACHE_LOG_DIR=/tmp/xyleme-servers apache2 -f "$here/apache2.conf" -DFOREGROUND \
    > /tmp/xyleme-servers/apache.out 2>&1 &
echo $! > /tmp/xyleme-servers/apache.main
lighttpd -D -f "$here/lighttpd.conf" > /tmp/xyleme-servers/lighttpd.out 2>&1 &
echo $! > /tmp/xyleme-servers/lighttpd.main
