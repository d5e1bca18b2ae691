import type { PresentedFormat } from '../verification/types';

/** Format names a presentation definition may use. */
export const PE_FORMATS = ['dc+sd-jwt', 'vc+sd-jwt', 'jwt_vc_json', 'jwt_vp_json', 'jwt_vc', 'jwt_vp'] as const;
export type PeFormat = (typeof PE_FORMATS)[number];

/** The credential families we verify, named by their DCQL format. */
export type CredentialFamily = 'dc+sd-jwt' | 'jwt_vc_json';

/*
 * vc+sd-jwt is the pre-1.0 name of dc+sd-jwt (SD-JWT VC changed its typ); jwt_vc and the VP envelopes
 * jwt_vp(_json) all carry JWT VCs. So the family, not the name, decides what a format allows.
 */
const FAMILY: Record<PeFormat, CredentialFamily> = {
  'dc+sd-jwt': 'dc+sd-jwt',
  'vc+sd-jwt': 'dc+sd-jwt',
  jwt_vc_json: 'jwt_vc_json',
  jwt_vp_json: 'jwt_vc_json',
  jwt_vc: 'jwt_vc_json',
  jwt_vp: 'jwt_vc_json',
};

export const isPeFormat = (f: string): f is PeFormat => (PE_FORMATS as readonly string[]).includes(f);
export const familyOf = (f: PeFormat): CredentialFamily => FAMILY[f];
export const familyOfPresented = (f: PresentedFormat): CredentialFamily => (f === 'jwt_vc_json' ? 'jwt_vc_json' : 'dc+sd-jwt');

/** Where a descriptor's formats come from: its own `format`, else the definition's (PE v2 §5). */
export function formatSource(
  definition: { readonly format?: object },
  descriptorIndex: number,
  descriptor: { readonly format?: object },
): { readonly path: string; readonly formats: readonly string[] } | undefined {
  if (descriptor.format && Object.keys(descriptor.format).length > 0)
    return { path: `input_descriptors[${descriptorIndex}].format`, formats: Object.keys(descriptor.format) };
  if (definition.format && Object.keys(definition.format).length > 0) return { path: 'format', formats: Object.keys(definition.format) };
  return undefined;
}

/** The families a descriptor accepts; undefined when no format is given anywhere (any family). */
export function allowedFamilies(
  definition: { readonly format?: object },
  descriptorIndex: number,
  descriptor: { readonly format?: object },
): ReadonlySet<CredentialFamily> | undefined {
  const source = formatSource(definition, descriptorIndex, descriptor);
  if (!source) return undefined;
  return new Set(source.formats.filter(isPeFormat).map(familyOf));
}

/** `a.b`, `a["dc+sd-jwt"]`: issue paths that stay readable. */
export const prop = (base: string, key: string): string =>
  /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? (base ? `${base}.${key}` : key) : `${base}[${JSON.stringify(key)}]`;

export interface Issue {
  readonly path: string;
  readonly message: string;
}
