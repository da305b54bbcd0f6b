/**
 * VPC mode (context `vpc`): every function gets a VpcConfig in the subnets with one security group whose
 * egress is HTTPS only, and the AWS services the code calls are reached through VPC endpoints (or a
 * NAT); without `vpc` the template has no EC2 resource at all. cdk-nag stays clean in every mode
 * (synth runs it). cfn-lint judges the same templates in cfn-lint.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildFleetscope } from '../../infra/build.js';
import { SERVICE_ENDPOINTS } from '../../infra/constructs/network.js';
import { allFunctions } from '../../shared/capabilities.js';
import { asArray, type Json, newApp, ofType, roleStatements, synth } from './synth.js';

const EXISTING = {
  vpc: 'vpc-0a1b2c3d4e5f60718',
  vpcSubnetIds: 'subnet-0a1b2c3d4e5f60711,subnet-0a1b2c3d4e5f60722',
  vpcRouteTableIds: 'rtb-0a1b2c3d4e5f60733',
};
/** us-east-1's managed prefix lists of DynamoDB and S3 (the ids are per region). */
const PREFIX_LISTS = { dynamodb: 'pl-02cd2c6b', s3: 'pl-63a5400a' };
const ENI_ACTIONS = ['ec2:CreateNetworkInterface', 'ec2:DeleteNetworkInterface'];

const functionsOf = (r: Record<string, Json>) => ofType(r, 'AWS::Lambda::Function');
const endpointServiceOf = (e: Json): string => {
  const name = JSON.stringify(e.Properties.ServiceName);
  return Object.keys(SERVICE_ENDPOINTS).find((s) => name.includes(`.${s}"`))!;
};
/** Every egress rule of a security group: inline ones and AWS::EC2::SecurityGroupEgress resources. */
function egressOf(resources: Record<string, Json>, sgId: string): Json[] {
  const inline = resources[sgId]!.Properties.SecurityGroupEgress ?? [];
  const separate = ofType(resources, 'AWS::EC2::SecurityGroupEgress')
    .filter(([, e]) => e.Properties.GroupId['Fn::GetAtt']?.[0] === sgId)
    .map(([, e]) => e.Properties);
  return [...inline, ...separate];
}

describe('VPC mode', () => {
  it('without context vpc: no function has a VpcConfig and the stack has no EC2 resource', () => {
    const { resources } = synth();
    for (const [, f] of functionsOf(resources)) expect(f.Properties.VpcConfig).toBeUndefined();
    expect(Object.values(resources).filter((r) => r.Type.startsWith('AWS::EC2::'))).toEqual([]);
    for (const [id] of ofType(resources, 'AWS::IAM::Role'))
      expect(roleStatements(resources, id).flatMap((s) => asArray(s.Action))).not.toContain(
        'ec2:CreateNetworkInterface',
      );
  });

  describe('vpc=create (endpoints)', () => {
    let s: ReturnType<typeof synth>;
    beforeAll(() => {
      s = synth({ vpc: 'create' });
    });

    it('runs every function in the two isolated subnets with the functions security group', () => {
      const sgs = ofType(s.resources, 'AWS::EC2::SecurityGroup');
      const fnSg = sgs.find(([, g]) => g.Properties.GroupDescription.startsWith('fleetscope functions'))!;
      const subnets = ofType(s.resources, 'AWS::EC2::Subnet');
      expect(subnets).toHaveLength(2);
      for (const [, sub] of subnets) expect(sub.Properties.MapPublicIpOnLaunch).toBe(false);
      const fns = functionsOf(s.resources);
      expect(fns).toHaveLength(allFunctions().length);
      for (const [, f] of fns)
        expect(f.Properties.VpcConfig).toEqual({
          SecurityGroupIds: [{ 'Fn::GetAtt': [fnSg[0], 'GroupId'] }],
          SubnetIds: subnets.map(([id]) => ({ Ref: id })),
        });
      // No route to the internet at all: everything AWS goes through the endpoints.
      s.template.resourceCountIs('AWS::EC2::NatGateway', 0);
      s.template.resourceCountIs('AWS::EC2::InternetGateway', 0);
      s.template.resourceCountIs('AWS::EC2::FlowLog', 1);
    });

    it('lets the functions out on HTTPS only: to the cluster CIDRs and to the interface endpoints', () => {
      const [fnSgId] = ofType(s.resources, 'AWS::EC2::SecurityGroup').find(([, g]) =>
        g.Properties.GroupDescription.startsWith('fleetscope functions'),
      )!;
      const [epSgId, epSg] = ofType(s.resources, 'AWS::EC2::SecurityGroup').find(([, g]) =>
        g.Properties.GroupDescription.startsWith('fleetscope interface endpoints'),
      )!;
      const egress = egressOf(s.resources, fnSgId);
      expect(egress).toHaveLength(2);
      for (const e of egress) expect([e.IpProtocol, e.FromPort, e.ToPort]).toEqual(['tcp', 443, 443]);
      expect(egress.map((e) => e.CidrIp ?? e.DestinationSecurityGroupId)).toEqual([
        '0.0.0.0/0',
        { 'Fn::GetAtt': [epSgId, 'GroupId'] },
      ]);
      // The endpoints' group admits the functions' group on 443 and nothing else, and sends nothing.
      const ingress = ofType(s.resources, 'AWS::EC2::SecurityGroupIngress').map(([, i]) => i.Properties);
      expect(ingress).toEqual([
        expect.objectContaining({
          IpProtocol: 'tcp',
          FromPort: 443,
          ToPort: 443,
          SourceSecurityGroupId: { 'Fn::GetAtt': [fnSgId, 'GroupId'] },
        }),
      ]);
      expect(epSg.Properties.SecurityGroupIngress).toBeUndefined();
      expect(epSg.Properties.SecurityGroupEgress).toEqual([
        expect.objectContaining({ CidrIp: '255.255.255.255/32' }), // CDK's "no egress" placeholder
      ]);
    });

    it('creates a gateway endpoint for DynamoDB and S3 and an interface endpoint for each other service', () => {
      const endpoints = ofType(s.resources, 'AWS::EC2::VPCEndpoint').map(([, e]) => e);
      const byService = Object.fromEntries(endpoints.map((e) => [endpointServiceOf(e), e]));
      expect(Object.keys(byService).sort()).toEqual(['dynamodb', 'events', 's3', 'secretsmanager', 'sts']);
      for (const [service, e] of Object.entries(byService)) {
        const kind = SERVICE_ENDPOINTS[service as keyof typeof SERVICE_ENDPOINTS].kind;
        expect(e.Properties.VpcEndpointType, service).toBe(kind === 'gateway' ? 'Gateway' : 'Interface');
        if (kind === 'interface') {
          expect(e.Properties.PrivateDnsEnabled, service).toBe(true);
          expect(e.Properties.SubnetIds, service).toHaveLength(2);
        } else expect(e.Properties.RouteTableIds, service).toHaveLength(2);
      }
    });

    it('gives every function role the ENI actions Lambda needs in a VPC, inline (no managed policy)', () => {
      for (const f of s.stack.functions.all) {
        const roleId = s.stack.getLogicalId(f.role.node.defaultChild as never);
        expect(s.resources[roleId]!.Properties.ManagedPolicyArns).toBeUndefined();
        const eni = roleStatements(s.resources, roleId).find((st) => st.Sid === 'VpcNetworkInterfaces');
        expect(asArray(eni!.Action)).toEqual(expect.arrayContaining(ENI_ACTIONS));
      }
    });
  });

  it('vpc=create with vpcEgress=nat: one NAT gateway, private subnets routed to it, no endpoints', () => {
    const { template, resources } = synth({ vpc: 'create', vpcEgress: 'nat' });
    template.resourceCountIs('AWS::EC2::NatGateway', 1);
    template.resourceCountIs('AWS::EC2::VPCEndpoint', 0);
    const subnetIds = functionsOf(resources)[0]![1].Properties.VpcConfig.SubnetIds.map((r: Json) => r.Ref);
    for (const id of subnetIds) expect(resources[id]!.Properties.MapPublicIpOnLaunch).toBe(false);
    const natRoutes = ofType(resources, 'AWS::EC2::Route').filter(([, r]) => r.Properties.NatGatewayId);
    expect(natRoutes).toHaveLength(2);
  });

  it('an existing VPC: its subnets and route tables by id, endpoints in it, nothing looked up', () => {
    const { template, resources } = synth({
      ...EXISTING,
      clusterEndpointCidrs: '10.0.0.0/8,172.16.0.0/12',
      vpcPrefixListIds: `${PREFIX_LISTS.dynamodb},${PREFIX_LISTS.s3}`,
    });
    template.resourceCountIs('AWS::EC2::VPC', 0);
    template.resourceCountIs('AWS::EC2::Subnet', 0);
    for (const [, f] of functionsOf(resources))
      expect(f.Properties.VpcConfig.SubnetIds).toEqual(EXISTING.vpcSubnetIds.split(','));
    for (const [, g] of ofType(resources, 'AWS::EC2::SecurityGroup'))
      expect(g.Properties.VpcId).toBe(EXISTING.vpc);
    const gateways = ofType(resources, 'AWS::EC2::VPCEndpoint').filter(
      ([, e]) => e.Properties.VpcEndpointType === 'Gateway',
    );
    expect(gateways).toHaveLength(2);
    for (const [, g] of gateways) expect(g.Properties.RouteTableIds).toEqual(['rtb-0a1b2c3d4e5f60733']);
    const [fnSgId] = ofType(resources, 'AWS::EC2::SecurityGroup').find(([, g]) =>
      g.Properties.GroupDescription.startsWith('fleetscope functions'),
    )!;
    expect(
      egressOf(resources, fnSgId)
        .map((e) => e.CidrIp)
        .filter(Boolean),
    ).toEqual(['10.0.0.0/8', '172.16.0.0/12']);
    // The gateway endpoints are reached at the services' prefix lists: without these rules a narrowed
    // list would leave every DynamoDB and S3 call of the functions timing out.
    expect(
      egressOf(resources, fnSgId)
        .filter((e) => e.DestinationPrefixListId)
        .map((e) => [e.DestinationPrefixListId, e.FromPort, e.ToPort]),
    ).toEqual([
      [PREFIX_LISTS.dynamodb, 443, 443],
      [PREFIX_LISTS.s3, 443, 443],
    ]);
  });

  it('a narrowed clusterEndpointCidrs keeps the AWS APIs reachable, or is refused saying how', () => {
    const narrowed = { clusterEndpointCidrs: '10.0.0.0/8' };
    // Gateway endpoints without their prefix lists: DynamoDB and S3 would be out of reach.
    expect(() => buildFleetscope(newApp({ ...EXISTING, ...narrowed }))).toThrow(
      /context "vpcPrefixListIds".*dynamodb/s,
    );
    expect(() => buildFleetscope(newApp({ vpc: 'create', ...narrowed }))).toThrow(
      'context "vpcPrefixListIds"',
    );
    // Through a NAT the AWS APIs are public addresses: a narrowed egress blocks them all.
    expect(() => buildFleetscope(newApp({ vpc: 'create', vpcEgress: 'nat', ...narrowed }))).toThrow(
      /context "clusterEndpointCidrs".*NAT/s,
    );
    // Prefix lists are ids, and only for the case that needs them.
    expect(() => synth({ ...EXISTING, ...narrowed, vpcPrefixListIds: 'dynamodb' })).toThrow(
      'context "vpcPrefixListIds"',
    );
    expect(() => synth({ ...EXISTING, vpcPrefixListIds: PREFIX_LISTS.dynamodb })).toThrow(
      'context "vpcPrefixListIds"',
    );
  });

  it('refuses VPC context that cannot work, naming the key', () => {
    const cases: [Record<string, string>, string][] = [
      [{ vpc: 'my-vpc' }, 'vpc'],
      [{ vpc: 'vpc-0a1b2c3d4e5f60718' }, 'vpcSubnetIds'],
      [{ ...EXISTING, vpcSubnetIds: 'subnet-0a1b2c3d4e5f60711' }, 'vpcSubnetIds'],
      [{ ...EXISTING, vpcRouteTableIds: '' }, 'vpcRouteTableIds'],
      [{ vpcSubnetIds: EXISTING.vpcSubnetIds }, 'vpc'],
      [{ vpc: 'create', vpcSubnetIds: EXISTING.vpcSubnetIds }, 'vpcSubnetIds'],
      [{ vpc: 'create', vpcEgress: 'internet' }, 'vpcEgress'],
      [{ vpc: 'create', vpcCidr: '10.0.0.0/24' }, 'vpcCidr'],
      [{ vpc: 'create', clusterEndpointCidrs: '10.0.0.0/33' }, 'clusterEndpointCidrs'],
      [{ vpc: 'create', clusterEndpointCidrs: '' }, 'clusterEndpointCidrs'],
    ];
    for (const [context, key] of cases)
      expect(() => buildFleetscope(newApp(context)), JSON.stringify(context)).toThrow(`context "${key}"`);
    // With a NAT the subnets already route out: no route tables are needed.
    expect(() => synth({ ...EXISTING, vpcRouteTableIds: '', vpcEgress: 'nat' })).not.toThrow();
  });
});
