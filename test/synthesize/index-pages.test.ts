import { describe, expect, it } from 'vitest';
import { indexAccess, indexEnvironment } from '../../pipeline/services/package-index/build-access.js';
import { resolveCutoff } from '../../pipeline/services/package-index/cutoff.js';
import { filterPage } from '../../pipeline/services/package-index/cutoff-filter.js';
import { normalizeProjectName, parseDistributionFilename } from '../../pipeline/services/package-index/distribution-filename.js';
import { normalizeUploadTime, type IndexFile, type ProjectPage } from '../../pipeline/services/package-index/index-page.js';
import { chooseFormat } from '../../pipeline/services/package-index/negotiate.js';
import { parseHtmlProjectList, parseHtmlProjectPage } from '../../pipeline/services/package-index/parse-html-page.js';
import { parseJsonProjectList, parseJsonProjectPage } from '../../pipeline/services/package-index/parse-json-page.js';
import { parseProjectPage } from '../../pipeline/services/package-index/parse-page.js';
import { renderProjectList, renderProjectPage } from '../../pipeline/services/package-index/render-page.js';
import { buildWheel } from '../../pipeline/services/package-index/wheel.js';
import { synthesizeConfig } from '../../stages/synthesize/config.js';

const PAGE_URL = 'https://index.example/simple/dep/';

function file(overrides: Partial<IndexFile> & { filename: string }): IndexFile {
  return {
    url: `https://files.example/${overrides.filename}`,
    hashes: { sha256: 'ab'.repeat(32) },
    requiresPython: null,
    yanked: false,
    uploadTime: null,
    size: 100,
    ...overrides,
  };
}

describe('project names and file names', () => {
  it('normalizes as PEP 503 does', () => {
    expect(normalizeProjectName('Silly_Walk')).toBe('silly-walk');
    expect(normalizeProjectName('a.-_b')).toBe('a-b');
  });

  it('reads project and version from wheels, sdists and eggs', () => {
    expect(parseDistributionFilename('dep-2.0.1-py3-none-any.whl')).toEqual({ project: 'dep', version: '2.0.1', kind: 'wheel' });
    expect(parseDistributionFilename('Zope_Interface-5.0-1-cp311-cp311-linux_x86_64.whl')).toEqual({
      project: 'zope-interface',
      version: '5.0',
      kind: 'wheel',
    });
    expect(parseDistributionFilename('foo-bar-1.0.tar.gz')).toEqual({ project: 'foo-bar', version: '1.0', kind: 'sdist' });
    expect(parseDistributionFilename('foo-2bar-1.0.zip', 'foo-2bar')).toEqual({ project: 'foo-2bar', version: '1.0', kind: 'sdist' });
    expect(parseDistributionFilename('dep-1.0-py3.8.egg')).toMatchObject({ project: 'dep', version: '1.0' });
    expect(parseDistributionFilename('README.txt')).toBeNull();
    expect(parseDistributionFilename('a/b-1.0.tar.gz')).toBeNull();
  });
});

describe('upload times (PEP 700)', () => {
  it('keeps PEP 700 text, converts other ISO instants to UTC and refuses anything else', () => {
    expect(normalizeUploadTime('2023-01-15T10:00:00.123456Z')).toBe('2023-01-15T10:00:00.123456Z');
    expect(normalizeUploadTime('2023-01-15T12:00:00+02:00')).toBe('2023-01-15T10:00:00.000Z');
    expect(normalizeUploadTime('2023-01-15')).toBeNull();
    expect(normalizeUploadTime('yesterday')).toBeNull();
    expect(normalizeUploadTime(null)).toBeNull();
  });
});

describe('PEP 691 JSON project pages', () => {
  const body = JSON.stringify({
    meta: { 'api-version': '1.1', _private: 1 },
    name: 'Dep',
    versions: ['1.0', '2.0'],
    files: [
      {
        filename: 'dep-1.0-py3-none-any.whl',
        url: '../../files/dep-1.0-py3-none-any.whl#sha256=ignored',
        hashes: { SHA256: 'AA'.repeat(32) },
        'requires-python': '>=3.8',
        'upload-time': '2023-01-15T00:00:00Z',
        size: 10,
        'core-metadata': true,
        unknown: 'ignored',
      },
      { filename: 'dep-2.0.tar.gz', url: 'https://elsewhere.example/dep-2.0.tar.gz', hashes: {}, yanked: 'broken', size: 20 },
      { filename: 'dep-2.0.1.tar.gz', url: '/x/dep-2.0.1.tar.gz', hashes: {}, yanked: true, 'upload-time': 'not a time' },
      { filename: '../evil-1.0.tar.gz', url: '/x/evil.tar.gz', hashes: {} },
    ],
  });

  it('reads files, resolving URLs against the page and ignoring keys it does not know', () => {
    const page = parseJsonProjectPage(body, PAGE_URL);
    expect(page.name).toBe('dep');
    expect(page.format).toBe('json');
    expect(page.files).toEqual([
      {
        filename: 'dep-1.0-py3-none-any.whl',
        url: 'https://index.example/files/dep-1.0-py3-none-any.whl',
        hashes: { sha256: 'aa'.repeat(32) },
        requiresPython: '>=3.8',
        yanked: false,
        uploadTime: '2023-01-15T00:00:00Z',
        size: 10,
      },
      {
        filename: 'dep-2.0.tar.gz',
        url: 'https://elsewhere.example/dep-2.0.tar.gz',
        hashes: {},
        requiresPython: null,
        yanked: 'broken',
        uploadTime: null,
        size: 20,
      },
      {
        filename: 'dep-2.0.1.tar.gz',
        url: 'https://index.example/x/dep-2.0.1.tar.gz',
        hashes: {},
        requiresPython: null,
        yanked: true,
        uploadTime: null,
        size: null,
      },
    ]);
  });

  it('names what it cannot read upstream-invalid', () => {
    expect(() => parseJsonProjectPage('{"meta": {"api-version": "2.0"}, "name": "dep", "files": []}', PAGE_URL)).toThrow(
      expect.objectContaining({ reason: 'upstream-invalid' }),
    );
    expect(() => parseJsonProjectPage('{"meta": {"api-version": "1.0"}, "name": "dep", "files": [{"filename": "x"}]}', PAGE_URL)).toThrow(
      expect.objectContaining({ reason: 'upstream-invalid' }),
    );
    expect(() => parseJsonProjectPage('{"meta": ', PAGE_URL)).toThrow(expect.objectContaining({ reason: 'upstream-invalid' }));
    expect(() => parseProjectPage('application/json', '{}', PAGE_URL, 'dep')).toThrow(
      expect.objectContaining({ reason: 'upstream-invalid' }),
    );
  });

  it('reads a project list', () => {
    expect(
      parseJsonProjectList('{"meta": {"api-version": "1.0"}, "projects": [{"name": "Frob"}, {"name": "spam"}]}', 'https://i/'),
    ).toEqual(['Frob', 'spam']);
  });
});

describe('PEP 503 HTML project pages', () => {
  const html = `<!DOCTYPE html><html><head><base href="https://mirror.example/pkgs/"><title>Links</title></head><body>
    <h1>Links for dep</h1>
    <a href="dep-1.0-py3-none-any.whl#sha256=${'CD'.repeat(32)}" data-requires-python="&gt;=3.8,&lt;4">dep-1.0-py3-none-any.whl</a><br/>
    <a data-yanked href='/abs/dep-2.0.tar.gz'>dep-2.0.tar.gz</a>
    <A HREF="../up/dep-2.0.1.tar.gz" DATA-YANKED="bad &amp; broken"><span>dep-2.0.1.tar.gz</span></A>
    <a name="anchor-without-href">nothing</a>
  </body></html>`;

  it('reads anchors, hashes from fragments, requires-python and yanked marks, and no upload time', () => {
    const page = parseHtmlProjectPage(html, PAGE_URL, 'Dep');
    expect(page).toEqual({
      name: 'dep',
      format: 'html',
      files: [
        {
          filename: 'dep-1.0-py3-none-any.whl',
          url: 'https://mirror.example/pkgs/dep-1.0-py3-none-any.whl',
          hashes: { sha256: 'cd'.repeat(32) },
          requiresPython: '>=3.8,<4',
          yanked: false,
          uploadTime: null,
          size: null,
        },
        {
          filename: 'dep-2.0.tar.gz',
          url: 'https://mirror.example/abs/dep-2.0.tar.gz',
          hashes: {},
          requiresPython: null,
          yanked: true,
          uploadTime: null,
          size: null,
        },
        {
          filename: 'dep-2.0.1.tar.gz',
          url: 'https://mirror.example/up/dep-2.0.1.tar.gz',
          hashes: {},
          requiresPython: null,
          yanked: 'bad & broken',
          uploadTime: null,
          size: null,
        },
      ],
    });
  });

  // What the regular expressions before htmlparser2 got wrong: each of these made a link of what is no link, or lost a hash or a bound.
  it('reads HTML as a browser does: comments, scripts and CDATA hold no links; quoting and references as HTML has them', () => {
    const sha = 'ab'.repeat(32);
    const tricky = `<html><head><!-- <base href="https://stale.example/"> --><script>document.write('<a href="evil-9.9.tar.gz">evil-9.9.tar.gz</a>')</script></head><body>
      <!-- <a href="old-0.1.tar.gz">old-0.1.tar.gz</a> -->
      <![CDATA[ <a href="cdata-0.2.tar.gz">cdata-0.2.tar.gz</a> ]]>
      <a href="dep-3.0.tar.gz" data-requires-python=">=3.8">dep-3.0.tar.gz</a>
      <a href=dep-3.1.tar.gz#sha256=${sha} data-requires-python=&gt;=3.9>dep-3.1.tar.gz</a>
      <A Href="dep-3.2.tar.gz" data-requires-python="&#62;=3.10,&NotEqualTilde;" data-yanked='it&apos;s &quot;broken&quot;'>dep&#x2D;3.2.tar.gz</A>
      <a href="dep-3.3.tar.gz">dep-3.3.tar.gz
    </body></html>`;
    const files = parseHtmlProjectPage(tricky, PAGE_URL, 'dep').files.map(({ filename, url, hashes, requiresPython, yanked }) => ({
      filename,
      url,
      hashes,
      requiresPython,
      yanked,
    }));
    expect(files).toEqual([
      { filename: 'dep-3.0.tar.gz', url: `${PAGE_URL}dep-3.0.tar.gz`, hashes: {}, requiresPython: '>=3.8', yanked: false },
      { filename: 'dep-3.1.tar.gz', url: `${PAGE_URL}dep-3.1.tar.gz`, hashes: { sha256: sha }, requiresPython: '>=3.9', yanked: false },
      {
        filename: 'dep-3.2.tar.gz',
        url: `${PAGE_URL}dep-3.2.tar.gz`,
        hashes: {},
        requiresPython: '>=3.10,\u2242\u0338',
        yanked: 'it\'s "broken"',
      },
      { filename: 'dep-3.3.tar.gz', url: `${PAGE_URL}dep-3.3.tar.gz`, hashes: {}, requiresPython: null, yanked: false },
    ]);
  });

  it('reads a project list: anchor texts, not anchors in comments', () => {
    expect(
      parseHtmlProjectList(
        '<html><body><!-- <a href="/simple/gone/">gone</a> --><a href="/simple/a/">A</a><a href="/simple/b/">b</a></body></html>',
      ),
    ).toEqual(['A', 'b']);
  });
});

describe('the cutoff filter', () => {
  const page: ProjectPage = {
    name: 'dep',
    format: 'json',
    files: [
      file({ filename: 'dep-1.0-py3-none-any.whl', uploadTime: '2023-01-15T00:00:00Z' }),
      file({ filename: 'dep-2.0-py3-none-any.whl', uploadTime: '2024-06-15T00:00:00Z' }),
      file({ filename: 'dep-2.0.1-py3-none-any.whl', uploadTime: '2024-06-20T00:00:00Z', yanked: 'broken' }),
      file({ filename: 'dep-3.0-py3-none-any.whl', uploadTime: '2026-01-15T00:00:00Z' }),
      file({ filename: 'dep-0.9.tar.gz', uploadTime: null }),
    ],
  };
  const names = (p: ProjectPage) => p.files.map((f) => f.filename);

  it('keeps what was uploaded strictly before the cutoff, yanked files with their mark', () => {
    const at = filterPage(page, { cutoff: new Date('2024-09-01T00:00:00Z'), missingUploadTime: 'exclude' });
    expect(names(at.page)).toEqual(['dep-1.0-py3-none-any.whl', 'dep-2.0-py3-none-any.whl', 'dep-2.0.1-py3-none-any.whl']);
    expect(at.page.files[2]!.yanked).toBe('broken');
    expect(at).toMatchObject({ afterCutoff: 1, missingUploadTime: 1, keptWithoutUploadTime: 0 });
    const exactly = filterPage(page, { cutoff: new Date('2023-01-15T00:00:00Z'), missingUploadTime: 'exclude' });
    expect(names(exactly.page)).toEqual([]);
  });

  it('leaves files without an upload time out unless told to include them; no cutoff keeps all', () => {
    const include = filterPage(page, { cutoff: new Date('2023-06-01T00:00:00Z'), missingUploadTime: 'include' });
    expect(names(include.page)).toEqual(['dep-1.0-py3-none-any.whl', 'dep-0.9.tar.gz']);
    expect(include.keptWithoutUploadTime).toBe(1);
    expect(filterPage(page, { cutoff: null, missingUploadTime: 'exclude' }).page.files).toHaveLength(5);
  });
});

describe('content negotiation (PEP 691)', () => {
  it('gives pip 23 JSON, old clients and browsers text/html, and honours ?format=', () => {
    const pip23 = 'application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01';
    expect(chooseFormat(pip23, null)).toBe('json');
    expect(chooseFormat(undefined, null)).toBe('text-html');
    expect(chooseFormat('*/*', null)).toBe('text-html');
    expect(chooseFormat('text/html', null)).toBe('text-html');
    expect(chooseFormat('application/vnd.pypi.simple.v1+html', null)).toBe('html');
    expect(chooseFormat('application/vnd.pypi.simple.latest+json', null)).toBe('json');
    expect(chooseFormat('text/html;q=0.5, application/vnd.pypi.simple.v1+json;q=0.4', null)).toBe('text-html');
    expect(chooseFormat('application/vnd.pypi.simple.v1+json;q=0, text/html', null)).toBe('text-html');
    expect(chooseFormat('application/json', null)).toBeNull();
    expect(chooseFormat('text/html', 'application/vnd.pypi.simple.v1+json')).toBe('json');
    expect(chooseFormat(pip23, 'nonsense')).toBe('json');
  });
});

describe('rendering', () => {
  const page: ProjectPage = {
    name: 'dep',
    format: 'json',
    files: [
      file({ filename: 'dep-1.0-py3-none-any.whl', uploadTime: '2023-01-15T00:00:00Z', requiresPython: '>=3.8,<4' }),
      file({ filename: 'dep-2.0.1-py3-none-any.whl', uploadTime: '2024-06-20T00:00:00Z', yanked: 'a "bad" <one>' }),
      file({ filename: 'dep-2.0.2-py3-none-any.whl', uploadTime: '2024-06-21T00:00:00Z', yanked: true }),
    ],
  };
  const urlOf = (f: IndexFile) => `/files/dep/${encodeURIComponent(f.filename)}`;

  it('writes JSON that reads back the same (API 1.1 with sizes and versions; 1.0 without sizes)', () => {
    const rendered = renderProjectPage(page, 'json', urlOf);
    expect(rendered.contentType).toBe('application/vnd.pypi.simple.v1+json');
    const json = JSON.parse(rendered.body) as { meta: { 'api-version': string }; versions: string[] };
    expect(json.meta['api-version']).toBe('1.1');
    expect(json.versions).toEqual(['1.0', '2.0.1', '2.0.2']);
    const back = parseJsonProjectPage(rendered.body, 'http://127.0.0.1:3141/simple/dep/');
    expect(back.files).toEqual(page.files.map((f) => ({ ...f, url: `http://127.0.0.1:3141${urlOf(f)}` })));
    const unsized = renderProjectPage({ ...page, files: [{ ...page.files[0]!, size: null }] }, 'json', urlOf);
    expect(JSON.parse(unsized.body)).toMatchObject({ meta: { 'api-version': '1.0' } });
    expect(JSON.parse(unsized.body)).not.toHaveProperty('versions');
  });

  it('writes HTML that reads back the same but for upload times and sizes', () => {
    for (const format of ['html', 'text-html'] as const) {
      const rendered = renderProjectPage(page, format, urlOf);
      expect(rendered.contentType).toBe(
        format === 'html' ? 'application/vnd.pypi.simple.v1+html; charset=utf-8' : 'text/html; charset=utf-8',
      );
      const back = parseHtmlProjectPage(rendered.body, 'http://127.0.0.1:3141/simple/dep/', 'dep');
      expect(back.files).toEqual(page.files.map((f) => ({ ...f, url: `http://127.0.0.1:3141${urlOf(f)}`, uploadTime: null, size: null })));
    }
  });

  it('writes project lists in both forms', () => {
    expect(JSON.parse(renderProjectList(['b', 'a'], 'json', '/simple/').body)).toEqual({
      meta: { 'api-version': '1.0' },
      projects: [{ name: 'a' }, { name: 'b' }],
    });
    expect(renderProjectList(['a'], 'text-html', '/simple/').body).toContain('<a href="/simple/a/">a</a>');
  });
});

describe('the cutoff of a build', () => {
  it('is the commit date, a fixed day or none, plus the slack', () => {
    expect(resolveCutoff('commit-date', 0, '2024-09-01T12:00:00+02:00')?.toISOString()).toBe('2024-09-01T10:00:00.000Z');
    expect(resolveCutoff('commit-date', 2, '2024-09-01T10:00:00Z')?.toISOString()).toBe('2024-09-03T10:00:00.000Z');
    expect(resolveCutoff('2023-06-01', 0, null)?.toISOString()).toBe('2023-06-01T00:00:00.000Z');
    expect(resolveCutoff('none', 5, '2024-09-01T10:00:00Z')).toBeNull();
    expect(() => resolveCutoff('commit-date', 0, null)).toThrow(expect.objectContaining({ reason: 'index-cutoff-without-date' }));
  });
});

describe('what a build container gets', () => {
  it('points pip and uv at the forwarder, and tells uv the cutoff only when every served file has an upload time', () => {
    const cutoff = new Date('2023-06-01T00:00:00Z');
    const env = indexEnvironment({
      indexUrl: 'http://127.0.0.1:3141/simple/',
      cutoff,
      missingUploadTime: 'exclude',
      timeoutSeconds: 30,
      retries: 2,
    });
    expect(env).toMatchObject({
      PIP_INDEX_URL: 'http://127.0.0.1:3141/simple/',
      UV_INDEX_URL: 'http://127.0.0.1:3141/simple/',
      UV_DEFAULT_INDEX: 'http://127.0.0.1:3141/simple/',
      UV_EXCLUDE_NEWER: '2023-06-01T00:00:00.000Z',
      PIP_NO_CACHE_DIR: '1',
      UV_NO_CACHE: '1',
      PIP_DEFAULT_TIMEOUT: '97',
    });
    expect(indexEnvironment({ indexUrl: 'u', cutoff, missingUploadTime: 'include', timeoutSeconds: 30, retries: 2 })).not.toHaveProperty(
      'UV_EXCLUDE_NEWER',
    );
    expect(
      indexEnvironment({ indexUrl: 'u', cutoff: null, missingUploadTime: 'exclude', timeoutSeconds: 30, retries: 2 }),
    ).not.toHaveProperty('UV_EXCLUDE_NEWER');
    const access = indexAccess({
      socketDir: '/tmp/perfmine-index-x',
      cutoff,
      missingUploadTime: 'exclude',
      timeoutSeconds: 30,
      retries: 2,
    });
    expect(access.mounts).toEqual([{ source: '/tmp/perfmine-index-x', target: '/mnt', readOnly: true }]);
    expect(access.startLine).toBe('python3 /mnt/index_forward.py --socket /mnt/index.sock --port 3141 --background');
    expect(access.prelude).toMatch(/^python3 .* --background && export PIP_INDEX_URL='http:\/\/127\.0\.0\.1:3141\/simple\/' /);
  });
});

describe('the wheel writer', () => {
  it('writes the same bytes for the same wheel, named as wheels are', () => {
    const spec = { name: 'My.Dep', version: '1.0', files: { 'my_dep/__init__.py': 'X = 1\n' } };
    const a = buildWheel(spec);
    expect(a.filename).toBe('my_dep-1.0-py3-none-any.whl');
    expect(a.bytes.equals(buildWheel(spec).bytes)).toBe(true);
    expect(a.bytes.subarray(0, 4).toString('hex')).toBe('504b0304');
  });
});

describe('the index configuration (synthesize.index)', () => {
  it('defaults to PyPI, the commit date, no slack, files without upload time left out', () => {
    expect(synthesizeConfig.parse({}).index).toEqual({
      upstream: 'https://pypi.org/simple/',
      cutoff: 'commit-date',
      slackDays: 0,
      missingUploadTime: 'exclude',
      timeoutSeconds: 30,
      retries: 2,
    });
    expect(synthesizeConfig.parse({ index: { upstream: 'dir:/srv/wheels', cutoff: '2024-02-29' } }).index).toMatchObject({
      upstream: 'dir:/srv/wheels',
      cutoff: '2024-02-29',
    });
  });

  it('refuses what it cannot use', () => {
    for (const index of [
      { cutoff: '2023-02-30' },
      { cutoff: 'yesterday' },
      { upstream: 'ftp://x/' },
      { slackDays: -1 },
      { retries: 11 },
      { proxy: 'x' },
    ]) {
      expect(synthesizeConfig.safeParse({ index }).success, JSON.stringify(index)).toBe(false);
    }
  });
});
