export default function Page() { return <p>campaigns</p>; }
