import { after, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { distributionForImport, missingTopLevelModule } from '../../src/engine/packages/importNames';
import {
  meetsSpecifier,
  normalizeName,
  parsePackageList,
  parsePackageSpec,
  parseRequirement,
  parseWheelFilename,
  type PackageSpec,
} from '../../src/engine/packages/spec';
import { findInWheelhouse } from '../../src/engine/packages/wheels';
import { pyodideDistribution, pyodideIncompatibility } from '../../src/engine/backends/pyodide/packagePlan';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-spec-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function parsed(input: string): PackageSpec {
  const spec = parsePackageSpec(input);
  if ('error' in spec) assert.fail(`${input}: ${spec.error}`);
  return spec;
}

function refused(input: unknown): string {
  const spec = parsePackageSpec(input);
  assert.ok('error' in spec, `${String(input)} should be refused`);
  return spec.error;
}

describe('package specs', () => {
  test('names, extras and specifiers are accepted and rebuilt canonically', () => {
    assert.deepEqual(parsed('requests'), {
      kind: 'requirement',
      requested: 'requests',
      name: 'requests',
      extras: [],
      specifier: '',
      requirement: 'requests',
    });
    const numpy = parsed(' numpy >= 1.26 , < 2 ');
    assert.equal(numpy.kind === 'requirement' && numpy.requirement, 'numpy>=1.26,<2');
    const black = parsed('black[jupyter, d]==24.1.0');
    assert.equal(black.kind === 'requirement' && black.requirement, 'black[jupyter,d]==24.1.0');
    for (const ok of [
      'zope.interface',
      'typing_extensions~=4.0',
      'Django!=4.0.*',
      'pkg===1.0-weird',
      'x>=1.0rc1',
      'y==2!1.0.post1.dev3+local.1',
    ])
      parsed(ok);
  });

  test('shell syntax, markers, options and direct references are refused with the reason', () => {
    assert.match(refused('numpy; rm -rf ~'), /PEP 508.*environment markers \(";"\)/);
    assert.match(refused('numpy ; python_version < "3.8"'), /environment markers/);
    assert.match(refused('--index-url=http://evil.example/simple'), /installer options/);
    assert.match(refused('-e .'), /installer options/);
    assert.match(refused('-r requirements.txt'), /installer options/);
    assert.match(refused('pkg @ https://example.com/pkg.whl'), /direct references/);
    for (const junk of [
      'numpy rm -rf ~',
      'numpy && curl x',
      'numpy|sh',
      'numpy$(id)',
      '`id`',
      'numpy>=',
      'numpy>=abc',
      'numpy 1.0',
      'a b',
      '(numpy)',
      'numpy[',
      'numpy[x y]',
    ]) {
      assert.match(refused(junk), /PEP 508|refused/, junk);
    }
    assert.match(refused('numpy>=1.*'), /only == and != take a ".\*" wildcard/);
    assert.match(refused('numpy~=1'), /~= needs at least two release numbers/);
    assert.match(refused(''), /empty/);
    assert.match(refused(42), /must be a string/);
    assert.match(refused('numpy\n--extra-index-url x'), /control characters/);
    assert.match(refused('x'.repeat(3000)), /longer than/);
  });

  test('wheel paths must be absolute, existing .whl files with a wheel name', () => {
    const file = path.join(dir, 'demo_pkg-1.0-py3-none-any.whl');
    fs.writeFileSync(file, 'not really a zip');
    const spec = parsed(file);
    assert.equal(spec.kind, 'file');
    assert.equal(spec.kind === 'file' && spec.wheel.name, 'demo_pkg');
    assert.equal(spec.kind === 'file' && spec.sha256, undefined);
    const hashed = parsed(`${file}#sha256=${'AB'.repeat(32)}`);
    assert.equal(hashed.kind === 'file' && hashed.sha256, 'ab'.repeat(32));
    assert.match(refused('../x.whl'), /absolute path/);
    assert.match(refused('./demo_pkg-1.0-py3-none-any.whl'), /absolute path/);
    assert.match(refused('~/x.whl'), /absolute path/);
    assert.match(refused(path.join(dir, 'missing-1.0-py3-none-any.whl')), /no such file/);
    assert.match(refused(path.join(dir, 'src.tar.gz')), /only \.whl files/);
    assert.match(refused(path.join(dir, 'notawheel.whl')), /not a wheel name/);
    assert.match(refused(`${file}#md5=abc`), /#sha256=/);
    assert.match(refused(`${file}#sha256=1234`), /#sha256=/);
    fs.mkdirSync(path.join(dir, 'dir_pkg-1.0-py3-none-any.whl'));
    assert.match(refused(path.join(dir, 'dir_pkg-1.0-py3-none-any.whl')), /not a regular file/);
  });

  test('wheel URLs must be http(s) and end in a wheel name', () => {
    const spec = parsed(`https://files.example/p/demo-2.0-py3-none-any.whl#sha256=${'0'.repeat(64)}`);
    assert.equal(spec.kind === 'url' && spec.url, 'https://files.example/p/demo-2.0-py3-none-any.whl');
    assert.equal(spec.kind === 'url' && spec.sha256, '0'.repeat(64));
    assert.match(refused('https://files.example/p/demo.tar.gz'), /wheel file name/);
    assert.match(refused('file:///etc/demo-1.0-py3-none-any.whl'), /only http/);
    assert.match(refused('git+https://github.com/x/y'), /only http/);
    assert.match(refused('https://files.example/demo-1.0-py3-none-any.whl#egg=demo'), /#sha256=/);
  });

  test('a list is all or nothing, at most the limit, duplicates once', () => {
    const list = parsePackageList(['a', 'b', 'a'], 20);
    assert.deepEqual(Array.isArray(list) && list.map((s) => s.requested), ['a', 'b']);
    assert.match((parsePackageList(['ok', 'numpy; rm -rf ~'], 20) as { error: string }).error, /environment markers/);
    assert.match((parsePackageList([], 20) as { error: string }).error, /non-empty/);
    assert.match((parsePackageList('numpy', 20) as { error: string }).error, /non-empty list/);
    assert.match((parsePackageList(['a', 'b', 'c'], 2) as { error: string }).error, /at most 2/);
  });

  test('wheel file names and name normalization', () => {
    assert.deepEqual(parseWheelFilename('numpy-2.2.5-cp313-cp313-pyemscripten_2025_0_wasm32.whl'), {
      filename: 'numpy-2.2.5-cp313-cp313-pyemscripten_2025_0_wasm32.whl',
      name: 'numpy',
      version: '2.2.5',
      pythonTags: ['cp313'],
      abiTags: ['cp313'],
      platformTags: ['pyemscripten_2025_0_wasm32'],
    });
    assert.deepEqual(parseWheelFilename('six-1.17.0-1build-py2.py3-none-any.whl')?.pythonTags, ['py2', 'py3']);
    assert.equal(parseWheelFilename('six-1.17.0.whl'), undefined);
    assert.equal(normalizeName('Typing_Extensions'), 'typing-extensions');
    assert.equal(normalizeName('zope..interface'), 'zope-interface');
  });
});

describe('PEP 440 versions and specifiers (@renovatebot/pep440)', () => {
  /** The specifier set of `x<text>`, as a request carries it. */
  const specifier = (text: string): string => {
    const spec = parseRequirement(`x${text}`);
    if ('error' in spec) assert.fail(`${text}: ${spec.error}`);
    return spec.specifier;
  };
  const meets = (version: string, text: string) => meetsSpecifier(version, specifier(text));

  test('ordering: a wheelhouse of two versions offers the later one (pre-releases admitted)', () => {
    const sorted = [
      '1.0.dev0',
      '1.0a1',
      '1.0a2.dev1',
      '1.0a2',
      '1.0b1',
      '1.0rc1',
      '1.0',
      '1.0.post1.dev0',
      '1.0.post1',
      '1.0.1',
      '1.1',
      '2!0.1',
    ];
    for (let i = 0; i + 1 < sorted.length; i++) {
      const house = fs.mkdtempSync(path.join(dir, 'order-'));
      for (const version of [sorted[i + 1], sorted[i]])
        fs.writeFileSync(path.join(house, `pair-${version}-py3-none-any.whl`), '');
      assert.equal(
        findInWheelhouse(house, 'pair', '>=0.dev0', () => true)?.wheel.version,
        sorted[i + 1],
        `${sorted[i]} < ${sorted[i + 1]}`,
      );
    }
    assert.equal(meets('1.0.0', '==1.0'), true);
    assert.equal(meets('1.0-r2', '==1.0.post2'), true);
    assert.equal(parseWheelFilename('pair-not.a.version-py3-none-any.whl'), undefined);
  });

  test('specifier sets are rebuilt without spaces, as written', () => {
    assert.equal(specifier(' >= 1.26 , < 2 '), '>=1.26,<2');
    assert.equal(specifier('==1.1.*,!=1.1.3'), '==1.1.*,!=1.1.3');
    assert.equal(specifier('===1.0-weird'), '===1.0-weird');
    assert.equal(specifier('~=2!1.4.post1'), '~=2!1.4.post1');
  });

  test('what is not a specifier is refused with the reason', () => {
    const why = (text: string) => (parseRequirement(`x${text}`) as { error: string }).error;
    assert.match(why('>=1.*'), /only == and != take a ".\*" wildcard/);
    assert.match(why('~=1'), /~= needs at least two release numbers/);
    assert.match(why('<1.0+local'), /local version \(\+local\) goes only with == or !=/);
    assert.match(why('==1.0.dev1.*'), /wildcard cannot follow a dev release/);
    assert.match(why('>=abc'), /"abc" is not a PEP 440 version/);
    assert.match(why('>=1.0 rm'), /is not a version specifier such as/);
    assert.match(why('>=1,'), /"" is not a version specifier such as/, 'an empty clause after a comma');
  });

  test('operators', () => {
    assert.equal(meets('1.4.5', '~=1.4.2'), true);
    assert.equal(meets('1.5', '~=1.4.2'), false);
    assert.equal(meets('2.3', '~=2.2'), true);
    assert.equal(meets('3.0', '~=2.2'), false);
    assert.equal(meets('1.1.3', '==1.1.*'), true);
    assert.equal(meets('1.10', '==1.1.*'), false);
    assert.equal(meets('1.1.3', '!=1.1.*'), false);
    assert.equal(meets('1.0+local', '==1.0'), true);
    assert.equal(meets('1.0', '==1.0+local'), false);
    assert.equal(meets('3.0a1', '<3.0'), false);
    assert.equal(meets('2.9', '<3.0rc1'), true);
    assert.equal(meets('1.7.post1', '>1.7'), false);
    assert.equal(meets('1.7.1', '>1.7'), true);
    assert.equal(meets('1.5', '>=1.2,<2,!=1.4'), true);
    assert.equal(meets('1.4', '>=1.2,<2,!=1.4'), false);
    assert.equal(meets('1.0-weird', '===1.0-weird'), true);
    assert.equal(meets('2.0rc1', '>=1.0'), true, 'an installed pre-release counts');
    assert.equal(meetsSpecifier('whatever', ''), true);
    assert.equal(meetsSpecifier('whatever', '>=1'), false);
    assert.equal(meetsSpecifier('whatever', '===whatever'), true);
  });

  test('where the library simplifies PEP 440: exclusive comparisons within one release', () => {
    // PEP 440 (and pip's packaging) let "<3.0rc1" admit 3.0a1 and ">1.7.post1" admit 1.7.post2; the library
    // refuses any version of the same release for < and >. If an upgrade fixes this, these fail: drop them.
    assert.equal(meets('3.0a1', '<3.0rc1'), false);
    assert.equal(meets('1.7.post2', '>1.7.post1'), false);
  });
});

describe('wheelhouse and Pyodide compatibility', () => {
  const house = path.join(dir, 'house');
  fs.mkdirSync(house);
  for (const name of [
    'demo-1.0-py3-none-any.whl',
    'demo-1.2-py3-none-any.whl',
    'demo-2.0b1-py3-none-any.whl',
    'demo-1.5-cp311-cp311-manylinux_2_17_x86_64.whl',
    'other-9.0-py3-none-any.whl',
    'readme.txt',
  ]) {
    fs.writeFileSync(path.join(house, name), '');
  }
  const { lock } = pyodideDistribution();
  const forPyodide = (w: Parameters<typeof pyodideIncompatibility>[0]) => pyodideIncompatibility(w, lock) === undefined;

  test('the highest final release that meets the request, among compatible wheels', () => {
    assert.equal(findInWheelhouse(house, 'Demo', '', forPyodide)?.wheel.version, '1.2');
    assert.equal(findInWheelhouse(house, 'demo', '', () => true)?.wheel.version, '1.5');
    assert.equal(findInWheelhouse(house, 'demo', '<1.2', forPyodide)?.wheel.version, '1.0');
    assert.equal(findInWheelhouse(house, 'demo', '>=2.0b1', forPyodide)?.wheel.version, '2.0b1');
    assert.equal(findInWheelhouse(house, 'demo', '>3', forPyodide), undefined);
    assert.equal(findInWheelhouse(path.join(dir, 'no-such-house'), 'demo', '', forPyodide), undefined);
  });

  test('Pyodide takes pure-Python and Pyodide-built wheels only, and says why not', () => {
    const tag = lock.info.abi_version;
    const [major, minor] = lock.info.python.split('.');
    assert.equal(pyodideIncompatibility(parseWheelFilename('a-1.0-py3-none-any.whl')!, lock), undefined);
    assert.equal(pyodideIncompatibility(parseWheelFilename('a-1.0-py2.py3-none-any.whl')!, lock), undefined);
    assert.equal(
      pyodideIncompatibility(
        parseWheelFilename(`a-1.0-cp${major}${minor}-cp${major}${minor}-pyemscripten_${tag}_wasm32.whl`)!,
        lock,
      ),
      undefined,
    );
    assert.match(
      pyodideIncompatibility(parseWheelFilename('a-1.0-cp311-cp311-manylinux_2_17_x86_64.whl')!, lock) ?? '',
      /not built for Pyodide/,
    );
    assert.match(
      pyodideIncompatibility(parseWheelFilename('a-1.0-py2-none-any.whl')!, lock) ?? '',
      /pure-Python wheel/,
    );
  });
});

describe('auto-install names', () => {
  test('the missing top-level module, and its distribution', () => {
    assert.equal(missingTopLevelModule("ModuleNotFoundError: No module named 'yaml'"), 'yaml');
    assert.equal(missingTopLevelModule("ModuleNotFoundError: No module named 'numpy.fake'"), undefined);
    assert.equal(missingTopLevelModule('ModuleNotFoundError: something else'), undefined);
    assert.equal(distributionForImport('yaml'), 'pyyaml');
    assert.equal(distributionForImport('sklearn'), 'scikit-learn');
    assert.equal(distributionForImport('PIL'), 'pillow');
    assert.equal(distributionForImport('cv2'), 'opencv-python');
    assert.equal(distributionForImport('requests'), 'requests');
  });
});
