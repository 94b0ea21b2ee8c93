"""Make the site `asv publish` wrote work without internet access.

asv's index.html loads jQuery, Flot, Bootstrap, stupidtable and blueimp-md5
from CDNs; offline the page shows only "Can not determine continental origin
of swallow".  This copies local copies from Debian's packages into
html/vendor/ and points the pages at them (dropping the CDN integrity
attributes).  A library with no local copy keeps its CDN address.

    sudo apt-get install libjs-jquery libjs-jquery-flot libjs-jquery-stupidtable \
        node-blueimp-md5 libjs-bootstrap
    asv publish && python publish_offline.py [html_dir]      # from asv_benchmarks/

Debian ships Flot 4 as one bundle that already holds the time, selection and
categories plugins (asv asks for Flot 0.8.3 plus those plugins; the API it
uses is unchanged; Flot 4 draws the legend in SVG with no background colour,
so vendor/flot4-compat.css gives it a white one; Flot 4 also draws axis labels
itself, so asv's own axislabels plugin is dropped).  flot-orderbars has no Debian package: its tag is replaced
by an empty local file, so the bars of a parameterized benchmark's bar chart
overlap instead of standing side by side; the line graphs are unaffected.
"""
import os
import re
import shutil
import sys

JS = "/usr/share/javascript"
FLOT_BUNDLE = f"{JS}/jquery-flot/jquery.flot.min.js"
# CDN file name (end of the URL) -> local file (None: an empty stand-in)
LOCAL = {
    "jquery-3.3.1.min.js": f"{JS}/jquery/jquery.min.js",
    "jquery.flot.min.js": FLOT_BUNDLE,
    "jquery.flot.time.min.js": None,        # in the Flot 4 bundle
    "jquery.flot.selection.min.js": None,   # in the Flot 4 bundle
    "jquery.flot.categories.min.js": None,  # in the Flot 4 bundle
    "jquery.flot.orderBars.js": None,       # not packaged: bars overlap
    "stupidtable.min.js": f"{JS}/jquery-stupidtable/stupidtable.min.js",
    "md5.min.js": f"{JS}/blueimp-md5/md5.min.js",
    "bootstrap.min.js": f"{JS}/bootstrap/js/bootstrap.min.js",
    "bootstrap.min.css": f"{JS}/bootstrap/css/bootstrap.min.css",
}
COMPAT_CSS = "flot4-compat.css"
COMPAT_RULES = ("/* Flot 4 legend: asv sets no legend background colour; SVG's default is black */\n"
                ".legendLayer rect.background { fill: #ffffff; stroke: #cccccc; }\n")
TAG = re.compile(r'<(script|link)\b[^>]*?(?:src|href)="(https://[^"]+)"[^>]*>')


def localize(html_dir):
    vendor = os.path.join(html_dir, "vendor")
    os.makedirs(vendor, exist_ok=True)
    if not os.path.exists(FLOT_BUNDLE):
        print(f"publish_offline: {FLOT_BUNDLE} missing (apt-get install libjs-jquery-flot): "
              "keeping the CDN addresses", file=sys.stderr)
        return 1
    missing = set()
    with open(os.path.join(vendor, COMPAT_CSS), "w") as f:
        f.write(COMPAT_RULES)

    def replace(match):
        kind, url = match.group(1), match.group(2)
        name = url.rsplit("/", 1)[1]
        if name not in LOCAL:
            return match.group(0)
        src = LOCAL[name]
        if src is not None and not os.path.exists(src):
            missing.add(src)
            return match.group(0)
        dst = os.path.join(vendor, name)
        if src is None:
            with open(dst, "w") as f:
                f.write(f"/* {name}: local stand-in, see publish_offline.py */\n")
        else:
            shutil.copyfile(src, dst)
        if kind == "link":
            return f'<link rel="stylesheet" href="vendor/{name}"><link rel="stylesheet" href="vendor/{COMPAT_CSS}">'
        return f'<script src="vendor/{name}" onerror="js_load_failure()"></script>'

    pages = [f for f in os.listdir(html_dir) if f.endswith(".html")]
    for page in pages:
        path = os.path.join(html_dir, page)
        with open(path) as f:
            text = f.read()
        # a <script ...></script> pair: the replacement writes its own closing tag
        new = re.sub(r'(<script\b[^>]*src="https://[^"]+"[^>]*>)\s*</script>',
                     lambda m: TAG.sub(replace, m.group(1)), text)
        new = TAG.sub(replace, new)  # <link> tags
        # Flot 4 draws axis labels itself: asv's own axislabels plugin would draw them twice
        new = re.sub(r'\s*<script[^>]*src="jquery\.flot\.axislabels\.js"></script>', "", new)
        if new != text:
            with open(path, "w") as f:
                f.write(new)
    for src in sorted(missing):
        print(f"publish_offline: {src} missing: that library keeps its CDN address", file=sys.stderr)
    print(f"publish_offline: {len(pages)} pages now load their libraries from {vendor}")
    return 0


if __name__ == "__main__":
    sys.exit(localize(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "html")))
