// From a ModuleNotFoundError to the distribution worth installing: auto-install needs the package name,
// and for a few popular packages it differs from the name code imports.

/** Import name -> distribution name, where they differ and the import name is not itself a usable package. */
const DISTRIBUTION_OF_IMPORT: Record<string, string> = {
  sklearn: 'scikit-learn',
  skimage: 'scikit-image',
  PIL: 'pillow',
  yaml: 'pyyaml',
  cv2: 'opencv-python',
  bs4: 'beautifulsoup4',
  dateutil: 'python-dateutil',
  attr: 'attrs',
  dotenv: 'python-dotenv',
  jose: 'python-jose',
  jwt: 'pyjwt',
  Crypto: 'pycryptodome',
  OpenSSL: 'pyopenssl',
  serial: 'pyserial',
  usb: 'pyusb',
  magic: 'python-magic',
  docx: 'python-docx',
  pptx: 'python-pptx',
  fitz: 'pymupdf',
  Levenshtein: 'levenshtein',
};

/**
 * The top-level module a ModuleNotFoundError message names (`No module named 'x'`), or undefined. A dotted
 * name means the top-level package exists and only a submodule is missing: installing cannot help then.
 */
export function missingTopLevelModule(message: string): string | undefined {
  const m = /No module named '([^']+)'/.exec(message);
  if (!m || m[1].includes('.')) return undefined;
  return m[1];
}

export function distributionForImport(module: string): string {
  return DISTRIBUTION_OF_IMPORT[module] ?? module;
}
