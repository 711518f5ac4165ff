import subprocess, sys
doc = '# Release Notes\n\n## v2.0: Big Changes!\n\n```sh\n## inside code\n```\n### Fixed bugs\n#### too deep\n## Credits\n'
open('/tmp/toc_case.md', 'w').write(doc)
want = ('- [Release Notes](#release-notes)\n'
        '  - [v2.0: Big Changes!](#v20-big-changes)\n'
        '    - [Fixed bugs](#fixed-bugs)\n'
        '  - [Credits](#credits)\n')
r = subprocess.run([sys.executable, '/app/toc.py', '/tmp/toc_case.md'], capture_output=True, text=True, timeout=10)
sys.exit(0 if r.stdout == want else 1)
